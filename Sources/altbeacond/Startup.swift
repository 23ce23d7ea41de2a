import BeaconLinux
import Glibc

/// Checks the capabilities `what` needs before any socket is opened, so the message can name
/// the missing ones. Returns the exit status to end with, or nil to go on.
func requireBluetoothCapabilities(for what: String) -> Int32? {
    let missing = Capabilities.missingForBluetooth()
    guard !missing.isEmpty else { return nil }
    writeStandardError("altbeacond: permission denied: missing \(missing.joined(separator: " and ")); \(what) needs CAP_NET_RAW and CAP_NET_ADMIN (run as root, or with AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN as deploy/altbeacond.service does)\n")
    return ExitCode.permission
}

/// Says why the HCI sockets could not be opened; returns the exit status.
func reportSocketFailure(_ error: Errno) -> Int32 {
    if error.isPermission {
        writeStandardError("altbeacond: permission denied opening the HCI sockets: needs CAP_NET_RAW and CAP_NET_ADMIN\n")
        return ExitCode.permission
    }
    if error == Errno(EAFNOSUPPORT) {
        writeStandardError("altbeacond: this kernel has no Bluetooth support (AF_BLUETOOTH): load the bluetooth module or enable CONFIG_BT\n")
        return ExitCode.unavailable
    }
    writeStandardError("altbeacond: cannot open the HCI sockets: \(error)\n")
    return ExitCode.unavailable
}
