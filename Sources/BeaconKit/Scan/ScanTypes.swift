import Glibc

/// Which scan commands the controller took.
public enum ScanFamily: String, Sendable {
    case legacy, extended
}

/// Why a scan command did not complete: BeaconLinux's `HCICommandFailure` with its errno as a
/// number (the runner maps one to the other).
public enum ScanCommandFailure: Error, Equatable, Sendable, CustomStringConvertible {
    case io(Int32)
    case timeout(HCIOpcode)
    case status(HCIOpcode, HCIStatus)
    /// Success, with fewer return parameters than the command's reply has.
    case shortReply(HCIOpcode)

    public var description: String {
        switch self {
        case .io(let e): guard let s = strerror(e) else { return "errno \(e)" }; return String(cString: s)
        case .timeout(let op): return "\(op) timed out"
        case .status(let op, let st): return "\(op) failed: \(st)"
        case .shortReply(let op): return "\(op) answered with too few return parameters"
        }
    }
}
