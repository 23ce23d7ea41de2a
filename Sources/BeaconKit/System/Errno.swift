import Glibc

/// A failed system call's errno, typed. BeaconLinux's raw calls all go
/// through its `syscall(_:)`, which retries EINTR in one place; BeaconKit's procedures take them as
/// outcomes.
public struct Errno: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32
    public init(_ rawValue: Int32) { self.rawValue = rawValue }
    public static var current: Errno { Errno(errno) }

    public static let interrupted = Errno(EINTR)
    public static let wouldBlock = Errno(EAGAIN)
    public static let noDevice = Errno(ENODEV)
    public static let notPermitted = Errno(EPERM)
    public static let accessDenied = Errno(EACCES)
    public static let alreadyInProgress = Errno(EALREADY)
    public static let busy = Errno(EBUSY)
    public static let timedOut = Errno(ETIMEDOUT)
    public static let networkDown = Errno(ENETDOWN)
    public static let brokenPipe = Errno(EPIPE)
    /// ERFKILL: the radio is blocked by rfkill.
    public static let rfkilled = Errno(132)
    public static let noEntry = Errno(ENOENT)
    public static let exists = Errno(EEXIST)
    /// Also: a request file past its size limit.
    public static let fileTooLarge = Errno(EFBIG)
    /// Also: the requests directory holds as many requests as it may.
    public static let noSpace = Errno(ENOSPC)
    public static let addressFamilyNotSupported = Errno(EAFNOSUPPORT)
    /// EINPROGRESS, as `BlockingCall` (and the power calls on it) refuse a second call while one
    /// runs: no HCIDEVUP, HCIDEVDOWN or fsync reports it, so it cannot be mistaken for theirs.
    public static let callInProgress = Errno(EINPROGRESS)

    public var isPermission: Bool { self == .notPermitted || self == .accessDenied }

    public var description: String {
        guard let s = strerror(rawValue) else { return "errno \(rawValue)" }
        return String(cString: s)
    }
}
