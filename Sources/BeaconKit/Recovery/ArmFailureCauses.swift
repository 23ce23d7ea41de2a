import Glibc

extension ArmFailure {
    /// The one map from a failed system call to what it means for the beacon. `bringingUp`: the
    /// errno came from HCIDEVUP, where EIO means the controller's setup failed (a failing
    /// controller, which the escalation ladder can cure), not a vanished device.
    public init(_ error: Errno, bringingUp: Bool = false) {
        switch error {
        case Errno(EIO) where bringingUp: self = .rejected("bringing it up failed: \(error)")
        case .noDevice, .brokenPipe, Errno(ENXIO), Errno(EBADF), Errno(EIO): self = .missing
        case .rfkilled: self = .blocked
        case .networkDown: self = .down
        case .timedOut: self = .timeout
        case .busy: self = .busy
        case .notPermitted, .accessDenied: self = .rejected("permission denied (needs CAP_NET_RAW and CAP_NET_ADMIN)")
        default: self = .rejected("\(error)")
        }
    }

    public init(_ f: HCICommandFailure) {
        switch f {
        case .io(let e): self.init(e)
        case .timeout: self = .timeout
        case .status, .shortReply: self = .rejected(f.description)
        }
    }
}
