/// Why a command did not complete.
public enum HCICommandFailure: Error, Equatable, Sendable, CustomStringConvertible {
    case io(Errno)
    case timeout(HCIOpcode)
    case status(HCIOpcode, HCIStatus)
    /// Success, with fewer return parameters than the command's reply has.
    case shortReply(HCIOpcode)

    public var description: String {
        switch self {
        case .io(let e): "\(e)"
        case .timeout(let op): "\(op) timed out"
        case .status(let op, let st): "\(op) failed: \(st)"
        case .shortReply(let op): "\(op) answered with too few return parameters"
        }
    }
}
