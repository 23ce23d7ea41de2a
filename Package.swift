// swift-tools-version:6.0
import PackageDescription

// libgpiod 1.6 (Debian 12, Pi OS bookworm) and 2.x (Pi OS trixie) have incompatible APIs;
// Sources/CGPIOD/shim.c picks one from the gpiod.h it finds. deploy/build-gpiod2 builds against
// a 2.x prefix: `-Xcc -DALTBEACOND_GPIOD_V2 -Xcc -I<prefix>/usr/include -Xlinker -L<prefix>/usr/lib/<multiarch>`.
let package = Package(
    name: "altbeacond",
    products: [
        .executable(name: "altbeacond", targets: ["altbeacond"]),
    ],
    targets: [
        // C: BlueZ's libbluetooth headers plus the ioctl numbers Swift cannot import (function-like macros).
        .target(name: "CBlueZ", linkerSettings: [.linkedLibrary("bluetooth")]),
        // C: a small shim over libgpiod v1/v2.
        .target(name: "CGPIOD", linkerSettings: [.linkedLibrary("gpiod")]),
        // C: Linux headers Glibc does not import (signalfd, inotify, rfkill).
        .target(name: "CLinux"),
        // C: a TLS client over Mbed TLS 2.28 (bookworm) or 3.6 (trixie), for the monitor's MQTT.
        // The order matters to a static link: mbedtls needs mbedx509, which needs mbedcrypto.
        .target(name: "CTLS", linkerSettings: [.linkedLibrary("mbedtls"), .linkedLibrary("mbedx509"), .linkedLibrary("mbedcrypto")]),
        // Pure Swift, no I/O: config, payload, HCI codecs, LED patterns, recovery policy.
        .target(name: "BeaconKit"),
        // The only module that touches the OS.
        .target(name: "BeaconLinux", dependencies: ["BeaconKit", "CBlueZ", "CGPIOD", "CLinux", "CTLS"]),
        .executableTarget(name: "altbeacond", dependencies: ["BeaconKit", "BeaconLinux"]),
        // Test helper (not installed): TOML on stdin, toml-test tagged JSON on stdout.
        .executableTarget(name: "toml-test-decoder", dependencies: ["BeaconKit"]),
        .testTarget(name: "BeaconKitTests", dependencies: ["BeaconKit"]),
        .testTarget(name: "BeaconLinuxTests", dependencies: ["BeaconLinux", "BeaconKit"]),
    ],
    swiftLanguageModes: [.v6]
)
