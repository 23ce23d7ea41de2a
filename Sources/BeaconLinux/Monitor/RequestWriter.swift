import BeaconKit
import Glibc

/// Hands a `RemoteRequest` to the beacon daemon (issue 32): a file in its requests directory
/// (`<dirname(status file)>/requests/`), which the daemon reads, judges and removes. Named
/// `<monotonic ms>-<n>.request` (zero-padded, 0600) and written by `replaceFile`, so the daemon
/// never reads half a request, and takes them in the order made.
public final class RequestWriter {
    public let directory: String
    private var count: UInt64 = 0
    private var nearBound = false

    /// `statusPath`: the beacon daemon's status file; its directory holds `requests/`.
    public init(statusPath: String) {
        let parent = splitPath(statusPath).directory
        directory = (parent == "/" ? "" : parent) + "/requests"
    }

    /// Writes one request; the file's name, or the errno (ENOENT: no directory, the daemon is
    /// not running or takes no changes; ENOSPC: `RemoteChangeLimits.maximumPending` requests
    /// wait already, the daemon is not taking them).
    @discardableResult
    public func write(_ request: RemoteRequest) throws(Errno) -> String {
        // Counted only every 64th write, or once the last count came near the bound: a burst
        // does not list the directory at every message.
        if count % 64 == 0 || nearBound {
            let pending = RequestDirectory.pendingNames(in: directory).count
            nearBound = pending + 64 >= RemoteChangeLimits.maximumPending
            if pending >= RemoteChangeLimits.maximumPending { throw Errno.noSpace }
        }
        count &+= 1
        // Zero-padded: the daemon takes them in byte order (RequestDirectory.take).
        let name = "\(padded(monotonicMilliseconds(), 12))-\(padded(Int64(truncatingIfNeeded: count), 6)).request"
        try replaceFile("\(directory)/\(name)", with: request.encoded, mode: 0o600, durability: .running)
        return name
    }
}

private func padded(_ v: Int64, _ width: Int) -> String {
    let digits = String(v)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}

/// The monitor's end of the control topics: each message decided by `LocalBeaconControl` and
/// written by `RequestWriter`, one log line per request; a directory that is missing (or
/// refuses us) said once until a request goes through again.
public final class LocalBeaconControlInput {
    public let control: LocalBeaconControl
    private let writer: RequestWriter
    private let log: Logger
    private var said: Errno?

    public init(control: LocalBeaconControl, statusPath: String, log: Logger) {
        self.control = control; self.log = log
        writer = RequestWriter(statusPath: statusPath)
    }

    /// Said once at start: what is listened to, and a warning when the broker connection is
    /// plain TCP (the changes, and the password that lets them in, readable on the network).
    public func start(tls: Bool) {
        guard control.mode != .off else { return }
        log.info("MQTT: changes to the local beacon taken from \(control.filters.joined(separator: " and ")), handed to \(writer.directory)")
        if !tls {
            log.warning("MQTT: control = \"\(control.mode.rawValue)\" without TLS: the changes and the MQTT password cross the network "
                + "in clear text; set tls = true where the network is not trusted")
        }
    }

    public func received(_ message: MQTTPublish) {
        switch control.decide(topic: message.topic, payload: message.payload, retained: message.retain) {
        case .ignore(let why):
            log.notice("MQTT: change ignored: \(why)")
        case .forward(let request):
            do throws(Errno) {
                let name = try writer.write(request)
                said = nil
                log.info("MQTT: \"\(request.summary)\" from \(message.topic) handed to the beacon daemon (\(name))")
            } catch {
                guard said != error else { return }
                said = error
                if error == .noEntry {
                    log.warning("MQTT: the beacon daemon takes no changes: no \(writer.directory); is altbeacond running?")
                } else if error == .noSpace {
                    log.warning("MQTT: \(RemoteChangeLimits.maximumPending) changes already wait in \(writer.directory) for the beacon daemon, "
                        + "which is not taking them (is altbeacond running?): \"\(request.summary)\" and those after it dropped until it does")
                } else {
                    log.warning("MQTT: cannot hand \"\(request.summary)\" to the beacon daemon in \(writer.directory) (\(error))")
                }
            }
        }
    }
}
