/// The exit statuses of SPEC §1: sysexits(3) codes, and the errno a command's failure maps to.
public enum ExitCode {
    public static let ok: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 64
    public static let unavailable: Int32 = 69
    public static let software: Int32 = 70
    /// EX_TEMPFAIL: a restart asked from afar; the unit takes it as success and restarts
    /// (SuccessExitStatus=, RestartForceExitStatus=), so it is not logged as a failure.
    public static let restartAsked: Int32 = 75
    public static let permission: Int32 = 77
    public static let config: Int32 = 78

    /// Why the HCI sockets could not be opened, and the status to end with: no permission (77),
    /// no Bluetooth in the kernel (69, with what to load), anything else (69).
    public static func socketFailure(_ error: Errno) -> (code: Int32, message: String) {
        if error.isPermission {
            return (permission, "altbeacond: permission denied opening the HCI sockets: needs CAP_NET_RAW and CAP_NET_ADMIN")
        }
        if error == .addressFamilyNotSupported {
            return (unavailable, "altbeacond: this kernel has no Bluetooth support (AF_BLUETOOTH): load the bluetooth module or enable CONFIG_BT")
        }
        return (unavailable, "altbeacond: cannot open the HCI sockets: \(error)")
    }

    /// The capabilities `what` needs and lacks (`missing`, as `Capabilities` names them), said.
    public static func missingCapabilities(_ missing: [String], for what: String) -> String {
        "altbeacond: permission denied: missing \(missing.joined(separator: " and ")); \(what) needs CAP_NET_RAW and CAP_NET_ADMIN "
            + "(run as root, or with AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN as deploy/altbeacond.service does)"
    }
}
