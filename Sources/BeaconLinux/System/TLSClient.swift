import BeaconKit
import CTLS
import Glibc

/// What a TLS step came to.
enum TLSStep: Equatable {
    case done
    /// Call again once the socket is readable / writable.
    case wantRead, wantWrite
    case closed
    case failed(String)
}

/// Trust anchors and an optional client certificate, loaded for one connection attempt (so a
/// file replaced on disk is used at the next one). Mbed TLS, statically linked (CTLS's shim).
public final class TLSClientConfig {
    fileprivate let raw: OpaquePointer
    /// A client certificate is offered.
    let hasClientCertificate: Bool
    /// What a broker that hangs up on us, or alerts, most likely wants.
    var refusalHint: String { hasClientCertificate ? "" : " (does it want a client certificate? cert_file and key_file)" }

    /// The library and its version, for the log.
    public static var library: String { String(cString: ctls_library()) }

    /// Loads `settings`' files. The client key is read here, after its owner and mode passed
    /// `MonitorPasswordFile` (judged on the open descriptor: what is judged is what is read).
    public static func load(_ settings: MQTTTLSSettings) -> Result<TLSClientConfig, MQTTFileError> {
        var key: [UInt8] = []
        if let path = settings.keyFile {
            switch readSecretFile(path, what: "the MQTT client key", limit: 64 * 1024) {
            case .success(let k): key = k
            case .failure(let e): return .failure(e)
            }
        }
        defer { for i in key.indices { key[i] = 0 } }
        var err = [CChar](repeating: 0, count: 512)
        let made: OpaquePointer? = key.withUnsafeBufferPointer { k in
            ctls_config_new(settings.caFile, settings.certFile, settings.keyFile == nil ? nil : k.baseAddress, k.count,
                            settings.keyFile, &err, err.count)
        }
        guard let made else { return .failure(MQTTFileError(text: text(err))) }
        return .success(TLSClientConfig(made, client: settings.keyFile != nil))
    }

    private init(_ raw: OpaquePointer, client: Bool) { self.raw = raw; hasClientCertificate = client }
    deinit { ctls_config_free(raw) }
}

/// One TLS client session over a connected non-blocking socket the caller owns and polls.
final class TLSSession {
    private let raw: OpaquePointer
    /// Kept alive as long as the session uses it.
    private let config: TLSClientConfig
    private var err = [CChar](repeating: 0, count: 600)

    static func start(_ config: TLSClientConfig, fd: FileDescriptor, serverName: String) -> Result<TLSSession, MQTTFileError> {
        var err = [CChar](repeating: 0, count: 512)
        guard let raw = ctls_session_new(config.raw, fd.rawValue, serverName, &err, err.count) else {
            return .failure(MQTTFileError(text: text(err)))
        }
        return .success(TLSSession(raw, config))
    }

    private init(_ raw: OpaquePointer, _ config: TLSClientConfig) { self.raw = raw; self.config = config }
    deinit { ctls_session_free(raw) }

    func handshake() -> TLSStep { step(Int(ctls_handshake(raw, &err, err.count))) }

    /// Bytes read into `buf` (`.done` with the count), or why none.
    func read(into buf: inout [UInt8]) -> (Int, TLSStep) {
        let n = buf.withUnsafeMutableBufferPointer { ctls_read(raw, $0.baseAddress, $0.count, &err, err.count) }
        return n > 0 ? (n, .done) : (0, step(n))
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> (Int, TLSStep) {
        let n = ctls_write(raw, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, &err, err.count)
        return n >= 0 ? (n, .done) : (0, step(n))
    }

    /// Decrypted bytes wait inside the session: poll cannot see them.
    var hasPending: Bool { ctls_pending(raw) > 0 }

    func closeNotify() { ctls_close_notify(raw) }

    /// "TLSv1.2 TLS-ECDHE-RSA-WITH-AES-256-GCM-SHA384"
    var agreed: String {
        var out = [CChar](repeating: 0, count: 160)
        ctls_describe(raw, &out, out.count)
        return text(out)
    }

    private func step(_ code: Int) -> TLSStep {
        switch code {
        case 0: .done
        case CTLS_WANT_READ: .wantRead
        case CTLS_WANT_WRITE: .wantWrite
        case CTLS_CLOSED: .closed
        case CTLS_ALERT: .failed("the broker ended the TLS session with a fatal alert\(config.refusalHint)")
        default: .failed(text(err))
        }
    }
}

/// The text of a NUL-terminated C buffer.
private func text(_ buf: [CChar]) -> String {
    String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// A `StreamSocket`'s bytes through a TLS session.
final class TLSTransport: StreamTransport {
    private let session: TLSSession
    init(_ session: TLSSession) { self.session = session }

    func receive(into buf: inout [UInt8]) -> TransportIO {
        let (n, s) = session.read(into: &buf)
        return io(n, s)
    }

    func transmit(_ bytes: UnsafeRawBufferPointer) -> TransportIO {
        let (n, s) = session.write(bytes)
        return io(n, s)
    }

    var hasPending: Bool { session.hasPending }
    func closing() { session.closeNotify() }

    private func io(_ n: Int, _ s: TLSStep) -> TransportIO {
        switch s {
        case .done: .moved(n)
        case .wantRead: .wouldBlock(.readable)
        case .wantWrite: .wouldBlock(.writable)
        case .closed: .closed
        case .failed(let why): .failed(why)
        }
    }
}
