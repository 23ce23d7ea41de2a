import BeaconKit
import Glibc

/// A file `[mqtt]` names (the password, the TLS files) that cannot be used, in words.
public struct MQTTFileError: Error {
    public var text: String
    /// Refused for its owner or mode (not merely unreadable now).
    public var refused = false
}

/// `[mqtt] password_file`'s first line, once its owner and mode passed `MonitorPasswordFile`.
public func readPasswordFile(_ path: String) -> Result<[UInt8], MQTTFileError> {
    readSecretFile(path, what: "the MQTT password file", limit: 4096).map { bytes in Array(bytes.prefix { $0 != 0x0a && $0 != 0x0d }) }
}

/// A secret's bytes (at most `limit`), once its owner and mode passed `MonitorPasswordFile`
/// (judged on the open descriptor, so what is judged is what is read). `what` names it.
func readSecretFile(_ path: String, what: String, limit: Int) -> Result<[UInt8], MQTTFileError> {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return .failure(MQTTFileError(text: "cannot read \(what) \(path) (\(Errno.current))")) }
    defer { close(fd) }
    var st = stat()
    guard fstat(fd, &st) == 0 else { return .failure(MQTTFileError(text: "cannot read \(what) \(path) (\(Errno.current))")) }
    let facts = MonitorPasswordFile.Facts(mode: UInt32(st.st_mode), owner: st.st_uid, group: st.st_gid, uid: geteuid(), gid: getegid())
    if let why = MonitorPasswordFile.problem(path: path, facts, what: what) { return .failure(MQTTFileError(text: why, refused: true)) }
    var bytes = [UInt8](repeating: 0, count: limit)
    var got = 0
    while got < limit {
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + got, limit - got) }
        if n < 0 && errno == EINTR { continue }
        guard n >= 0 else { return .failure(MQTTFileError(text: "cannot read \(what) \(path) (\(Errno.current))")) }
        if n == 0 { break }
        got += n
    }
    return .success(Array(bytes[0..<got]))
}
