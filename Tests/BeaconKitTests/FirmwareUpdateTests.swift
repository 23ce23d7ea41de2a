import XCTest
@testable import BeaconKit

/// Issue 39: when the monitor asks the updater for a release, and why not.
final class FirmwareUpdateTests: XCTestCase {
    static let now: Int64 = 1_764_244_000
    static let release = FleetReleaseTests.release
    static let releaseTopic = "altbeacond/fleet/release"
    static let install = "altbeacond/pi/update/set"
    static let idle = UpdaterState(installedVersion: "1.2.0", slot: "A", phaseWord: "idle", outcome: UpdaterState.Outcome.none)

    func card(_ control: MQTTControl = .beacon, authenticated: Bool = true, _ capability: FirmwareCapability = .ab(idle),
              release: String? = FleetReleaseTests.message) -> FirmwareUpdate {
        var f = FirmwareUpdate(node: "pi", control: control, authenticated: authenticated, monitorVersion: "1.2.0")
        f.capability = capability
        if let release { _ = f.received(topic: Self.releaseTopic, payload: Array(release.utf8), retained: true, nowS: 0) }
        return f
    }

    func press(_ f: inout FirmwareUpdate, at s: Int64 = now, payload: String = "install", retained: Bool = false) -> FirmwareUpdate.Decision {
        f.received(topic: Self.install, payload: Array(payload.utf8), retained: retained, nowS: s)
    }

    /// The release message with install true (and another version or URL).
    func fleetMessage(version: String = "1.3.0", url: String = "https://host/altbeacond-1.3.0.raucb") -> [UInt8] {
        Array("{\"version\":\"\(version)\",\"url\":\"\(url)\",\"install\":true}".utf8)
    }

    func testInstallFromHomeAssistantAsksForTheLatestRelease() {
        var f = card()
        XCTAssertTrue(f.installAvailable)
        XCTAssertEqual(f.filters, [Self.releaseTopic, Self.releaseTopic + "/rolled-back/+", Self.install])
        let d = press(&f)
        XCTAssertEqual(d, .request(UpdateRequest(release: Self.release, origin: .homeAssistant, time: Self.now)))
        guard case .request(let r) = d else { return }
        f.requestWritten(r)
        XCTAssertEqual(f.outcomeText, "asked the updater for 1.3.0 (Home Assistant)")
        XCTAssertEqual(press(&f, at: Self.now + 5), .ignore("1.3.0 was asked of the updater already; waiting for its outcome"),
                       "never the same version and URL twice while the outcome is the same")
        // The updater took it and failed: the outcome changed, a person may try again.
        f.capability = .ab(UpdaterState(installedVersion: "1.2.0", phaseWord: "idle", outcome: .failed, outcomeVersion: "1.3.0",
                                        message: "download: 404", time: Self.now + 60))
        XCTAssertEqual(f.outcomeText, "failed 1.3.0: download: 404", "the updater's outcome, newer than the monitor's word")
        XCTAssertEqual(press(&f, at: Self.now + 70), .request(UpdateRequest(release: Self.release, origin: .homeAssistant, time: Self.now + 70)))
    }

    func testInstallIsRefusedAndSaidWhy() {
        var package = card(.beacon, .package)
        XCTAssertFalse(package.installAvailable)
        XCTAssertEqual(press(&package), .refuse("1.3.0: this card is a package install, updated with apt (sudo apt upgrade)"))
        XCTAssertEqual(package.outcomeText,
                       "refused by the monitor: 1.3.0: this card is a package install, updated with apt (sudo apt upgrade)")
        var old = card(.beacon, .needsReflash)
        XCTAssertEqual(press(&old), .refuse("1.3.0: this card's image predates A/B updates: reflash it once to get them"))
        var anonymous = card(.beacon, authenticated: false)
        XCTAssertFalse(anonymous.installAvailable)
        XCTAssertEqual(press(&anonymous), .refuse("1.3.0: the broker does not authenticate who publishes (no mqtt.username and "
                                                  + "password_file, no client certificate)"))
        var unknown = card(release: nil)
        XCTAssertEqual(press(&unknown), .refuse("no release is known: nothing valid on altbeacond/fleet/release"))
        var broken = card(release: "{\"version\":\"1.3.0\"}")
        XCTAssertEqual(press(&broken), .refuse("no release is known: nothing valid on altbeacond/fleet/release (not a release: no \"url\" string)"))
        var current = card(release: FleetReleaseTests.message.replacingPrefix("{\"version\":\"1.3.0\"", with: "{\"version\":\"1.2.0\""))
        XCTAssertEqual(press(&current), .refuse("1.2.0 is installed already"))
        var busy = card(.beacon, .ab(UpdaterState(installedVersion: "1.2.0", phaseWord: "downloading")))
        XCTAssertEqual(press(&busy), .refuse("1.3.0: an update is under way (downloading)"))
        var f = card()
        XCTAssertEqual(press(&f, retained: true), .ignore("altbeacond/pi/update/set: a retained Install (pressed once, not at every connection)"))
        XCTAssertEqual(press(&f, payload: "INSTALL"), .ignore("altbeacond/pi/update/set: \"INSTALL\" is not \"install\""))
        XCTAssertNil(f.note, "an ignored message is no outcome")
    }

    func testWithControlOffNothingIsListenedToButTheRelease() {
        var f = card(.off)
        XCTAssertFalse(f.installAvailable)
        XCTAssertEqual(f.filters, [Self.releaseTopic, Self.releaseTopic + "/rolled-back/+"])
        XCTAssertFalse(f.handles(Self.install))
        XCTAssertEqual(press(&f), .ignore("altbeacond/pi/update/set: not an update topic"))
        XCTAssertEqual(f.received(topic: Self.releaseTopic, payload: fleetMessage(), retained: true, nowS: Self.now),
                       .refuse("the fleet's 1.3.0: [mqtt] control is off on this card"))
        XCTAssertEqual(f.subscribe(packetID: 4), try MQTTSubscribe(packetID: 4, subscriptions: [MQTTSubscription(Self.releaseTopic, qos: .atLeastOnce),
                                                                                  MQTTSubscription(Self.releaseTopic + "/rolled-back/+", qos: .atLeastOnce)]),
                       "the release and the fleet's rollback reports, whatever control says")
    }

    func testTheFleetInstallsWhereItMay() {
        var f = card(.fleet)
        let d = f.received(topic: Self.releaseTopic, payload: fleetMessage(), retained: true, nowS: Self.now)
        var fleetRelease = Self.release
        fleetRelease.releaseURL = nil; fleetRelease.install = true; fleetRelease.rollout = 100; fleetRelease.haltAfter = 1
        XCTAssertEqual(d, .request(UpdateRequest(release: fleetRelease, origin: .fleet, time: Self.now)))
        guard case .request(let r) = d else { return }
        f.requestWritten(r)
        XCTAssertEqual(f.outcomeText, "asked the updater for 1.3.0 (the fleet's release)")
        // The broker sends the retained release again at each connection: asked once.
        XCTAssertEqual(f.received(topic: Self.releaseTopic, payload: fleetMessage(), retained: true, nowS: Self.now + 100),
                       .ignore("1.3.0 was asked of the updater already; waiting for its outcome"))
        // Another URL for the same version is another request.
        XCTAssertEqual(f.received(topic: Self.releaseTopic, payload: fleetMessage(url: "https://mirror/a.raucb"), retained: false, nowS: Self.now + 200),
                       .request(UpdateRequest(release: FleetRelease(version: "1.3.0", url: "https://mirror/a.raucb", install: true), origin: .fleet, time: Self.now + 200)))
        XCTAssertEqual(f.received(topic: Self.releaseTopic, payload: fleetMessage(version: "1.2.0"), retained: false, nowS: Self.now),
                       .nothing, "never the version installed")
    }

    func testTheFleetNeedsFleetControlAndAnABCard() {
        var beacon = card(.beacon)
        XCTAssertEqual(beacon.received(topic: Self.releaseTopic, payload: fleetMessage(), retained: true, nowS: Self.now),
                       .refuse("the fleet's 1.3.0: [mqtt] control is \"beacon\"; installs asked by the release topic need \"fleet\""))
        var package = card(.fleet, .package)
        XCTAssertEqual(package.received(topic: Self.releaseTopic, payload: fleetMessage(), retained: true, nowS: Self.now),
                       .refuse("the fleet's 1.3.0: this card is a package install, updated with apt (sudo apt upgrade)"))
        var anonymous = card(.fleet, authenticated: false)
        XCTAssertEqual(anonymous.received(topic: Self.releaseTopic, payload: fleetMessage(), retained: true, nowS: Self.now),
                       .refuse("the fleet's 1.3.0: the broker does not authenticate who publishes (no mqtt.username and "
                               + "password_file, no client certificate)"))
    }

    /// A release that rolled back here is never taken from the fleet again (it would boot, fail
    /// and roll back forever); a person's Install tries it again.
    func testWhatFailedHereIsNotRetriedByTheFleet() {
        for (outcome, word) in [(UpdaterState.Outcome.rolledBack, "rolled back"), (.refused, "refused"), (.failed, "failed")] {
            let after = UpdaterState(installedVersion: "1.2.0", phaseWord: "idle", outcome: outcome, outcomeVersion: "1.3.0",
                                     message: "its beacon was not on air within 600 s", time: Self.now - 10)
            var f = card(.fleet, .ab(after))
            XCTAssertEqual(f.received(topic: Self.releaseTopic, payload: fleetMessage(), retained: true, nowS: Self.now),
                           .refuse("the fleet's 1.3.0: \(word) on this card before; Install in Home Assistant tries it again"))
            XCTAssertEqual(f.received(topic: Self.releaseTopic, payload: fleetMessage(version: "1.3.1"), retained: false, nowS: Self.now).isRequest,
                           true, "another version is")
            XCTAssertEqual(f.received(topic: Self.releaseTopic, payload: fleetMessage(), retained: false, nowS: Self.now).isRequest, false)
            XCTAssertEqual(press(&f).isRequest, true, "a person's Install is")
        }
    }

    /// The fleet's release came before the card could take it (the updater's state not there
    /// yet, or busy): taken once it can.
    func testAPendingFleetInstallIsTakenWhenTheCardCan() {
        var f = card(.fleet, .ab(UpdaterState(installedVersion: "1.2.0", phaseWord: "trial")))
        XCTAssertEqual(f.received(topic: Self.releaseTopic, payload: fleetMessage(), retained: true, nowS: Self.now), .nothing,
                       "the fleet's release waits, unsaid: it may be this very one being installed")
        XCTAssertEqual(f.updaterChanged(nowS: Self.now + 1), .nothing)
        XCTAssertNil(f.note, "nothing shown as refused")
        f.capability = .ab(Self.idle)
        XCTAssertEqual(f.updaterChanged(nowS: Self.now + 2).isRequest, true)
        var quiet = card(.fleet)
        XCTAssertEqual(quiet.updaterChanged(nowS: Self.now), .nothing, "no install asked: nothing")
    }

    func testAWithdrawnReleaseAndAnotherTopic() {
        var f = card()
        XCTAssertEqual(f.received(topic: Self.releaseTopic, payload: [], retained: false, nowS: Self.now),
                       .ignore("altbeacond/fleet/release: the release was withdrawn (an empty message)"))
        XCTAssertNil(f.release)
        f = card()
        f.reconfigure(node: "pi", releaseTopic: "altbeacond/fleet/release/canary", control: .beacon, authenticated: true)
        XCTAssertNil(f.release, "the canary topic's release is the one it brings")
        XCTAssertEqual(f.filters, ["altbeacond/fleet/release/canary", "altbeacond/fleet/release/canary/rolled-back/+", Self.install])
        XCTAssertEqual(f.received(topic: "altbeacond/fleet/release/canary", payload: Array("x".utf8), retained: true, nowS: 0),
                       .ignore("altbeacond/fleet/release/canary: not a release: not a JSON object"))
        XCTAssertEqual(f.releaseProblem, "not a release: not a JSON object")
    }

    func testTheInstalledVersion() {
        XCTAssertEqual(card(.beacon, .package).installedVersion, "1.2.0", "the monitor's own: the same binary")
        XCTAssertEqual(card(.beacon, .ab(UpdaterState(installedVersion: "1.2.5"))).installedVersion, "1.2.5", "the booted slot's")
    }

    func testARequestThatCannotBeWrittenIsTheOutcome() {
        var f = card()
        guard case .request(let r) = press(&f) else { return XCTFail("no request") }
        f.requestFailed(r, why: "/run/altbeacon-update/request: EACCES")
        XCTAssertEqual(f.outcomeText, "not asked: cannot hand 1.3.0 to the updater (/run/altbeacon-update/request: EACCES)")
        XCTAssertEqual(press(&f).isRequest, true, "not asked: may be asked again")
    }
}

extension FirmwareUpdate.Decision {
    var isRequest: Bool { if case .request = self { true } else { false } }
}
