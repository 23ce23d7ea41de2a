import BeaconKit
import Glibc

/// The monitor's end of firmware updates (issue 39): what the card can do, read from the files
/// beside it (`FirmwareUpdatePaths`: the root-side updater's state file, the image's marker);
/// each message on the release or Install topic decided by BeaconKit's `FirmwareUpdate`; a
/// request written where the updater reads it. Refusals are said once, until another.
public final class FirmwareUpdateInput {
    public private(set) var model: FirmwareUpdate
    public let paths: FirmwareUpdatePaths
    private let log: Logger
    /// The updater's state file: it rewrites it by a rename, each change (a phase, an
    /// outcome) goes out at once.
    private var stateWatch: FileChangeWatch?
    /// The last refusal or ignored message said, not said again while it is the same.
    private var said: String?
    /// A state file that is there but cannot be read, said once per cause.
    private var saidRead: Errno?
    /// What the monitor file last said (nil: not written yet), and the session as it is.
    private var saidConnected: Bool?
    private var connected: Bool?

    public init(paths: FirmwareUpdatePaths, node: String, settings: MQTTSettings, version: String, log: Logger) {
        self.paths = paths; self.log = log
        model = FirmwareUpdate(node: node, releaseTopic: settings.releaseTopic, control: settings.control,
                               authenticated: settings.authenticatesPublishers, monitorVersion: version)
        model.capability = capability()
    }

    /// `[mqtt]` or the node edited.
    public func reconfigure(node: String, settings: MQTTSettings) {
        model.reconfigure(node: node, releaseTopic: settings.releaseTopic, control: settings.control,
                          authenticated: settings.authenticatesPublishers)
    }

    /// Said once at start: what this card shows in Home Assistant, and why.
    public func start(loop: EventLoop, changed: @escaping () -> Void) {
        switch model.capability {
        case .ab(let s):
            log.info("update: an A/B card (slot \(s.slot ?? "?"), \(s.installedVersion ?? "version unknown")); releases from \(model.releaseTopic)"
                + (model.installAvailable ? ", installed when asked" : "; no Install: [mqtt] control is off"))
        case .needsReflash: log.info("update: this image predates A/B updates (no \(paths.stateFile)); a reflash gets them")
        case .package: log.info("update: a package install (no \(paths.imageMarker)); updated with apt")
        }
        // The directory may be made later: watched again at each `read`.
        stateWatch = FileChangeWatch(path: paths.stateFile, loop: loop)
        stateWatch?.start(changed)
    }

    public func stop() {
        stateWatch?.stop()
    }

    /// The card read again; a fleet install it could not take before is taken now. The model
    /// as it now is.
    public func read(nowS: Int64) -> FirmwareUpdate {
        stateWatch?.rewatch()
        let now = capability()
        if now != model.capability {
            model.capability = now
            handle(model.updaterChanged(nowS: nowS))
            // the updater's directory came after the session: the gate is told now
            if let up = connected { connection(up: up) }
        }
        // a failed download's back-off over: the fleet's release asked again (issue 49)
        handle(model.retryDue(nowS: nowS))
        return model
    }

    /// A message on the release topic or the Install topic.
    public func received(_ message: MQTTPublish, nowS: Int64) {
        _ = read(nowS: nowS)
        handle(model.received(topic: message.topic, payload: message.payload, retained: message.retain, nowS: nowS))
    }

    /// The broker's session up or down, for the update gate (`paths.monitorFile`), on an A/B card
    /// only and only when it changes (`replaceFile`).
    public func connection(up: Bool) {
        connected = up
        guard case .ab = model.capability, saidConnected != up else { return }
        do throws(Errno) {
            try replaceFile(paths.monitorFile, with: Array("connected=\(up ? 1 : 0)\n".utf8), mode: 0o600, durability: .running)
            saidConnected = up
        } catch {
            log.warning("update: cannot tell the update gate the broker is \(up ? "reached" : "lost"): \(paths.monitorFile) (\(error))")
        }
    }

    /// `state` readable: an A/B card. Else the image's marker: an image from before A/B. Else a package.
    private func capability() -> FirmwareCapability {
        do throws(Errno) {
            let bytes = try readFile(paths.stateFile, limit: UpdaterState.maxBytes + 1)
            saidRead = nil
            return .ab(UpdaterState.parse(bytes))
        } catch {
            if error != .noEntry && saidRead != error {
                saidRead = error
                log.warning("update: cannot read \(paths.stateFile) (\(error)); this card is not offered updates until it can")
            }
        }
        return access(paths.imageMarker, F_OK) == 0 ? .needsReflash : .package
    }

    private func handle(_ d: FirmwareUpdate.Decision) {
        switch d {
        case .nothing: return
        case .ignore(let why): sayOnce("update: \(why)", warning: false)
        case .refuse(let why): sayOnce("update refused: \(why)", warning: true)
        case .request(let r): write(r)
        }
    }

    private func sayOnce(_ text: String, warning: Bool) {
        guard said != text else { return }
        said = text
        if warning { log.warning(text) } else { log.notice(text) }
    }

    /// Written by `replaceFile` over `request`: the updater never reads half of one.
    private func write(_ r: UpdateRequest) {
        guard let bytes = r.encoded else { return }   // the model asks only for valid releases
        do throws(Errno) {
            try replaceFile(paths.requestFile, with: bytes, mode: 0o600, durability: .running)
        } catch {
            model.requestFailed(r, why: "\(paths.requestFile): \(error)")
            said = nil
            log.warning("update: cannot ask the updater for \(r.release.version): \(paths.requestFile) (\(error))")
            return
        }
        model.requestWritten(r)
        said = nil
        log.notice("update: asked the updater for \(r.release.version) from \(r.release.url) (\(r.origin.rawValue)) in \(paths.requestFile)")
    }
}
