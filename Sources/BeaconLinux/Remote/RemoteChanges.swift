import BeaconKit
import Glibc

/// What the change runner asks of the daemon it runs in.
public protocol RemoteChangesHost: AnyObject {
    /// Between SIGTERM and exit: nothing more is taken.
    var isStopping: Bool { get }
    /// Under systemd, which starts the daemon again after a restart asked from afar.
    var canRestart: Bool { get }
    /// config.toml was written: read it again now (the inotify event that follows finds nothing new).
    func configWritten()
    /// A restart from afar, taken: off air, then exit for systemd to start the service again.
    func restartAsked()
    /// The status LED's identify pattern, on or off.
    func identify(_ on: Bool)
    /// What became of the last change, for the status file (and so Home Assistant).
    func reported(_ change: RemoteChangeReport)
}

/// Changes from afar (issues 32, 38): the monitor leaves each as a request file. What becomes of
/// them is `RemoteChangeProcedure`'s to decide (coalescing, the write bound, stale requests, one
/// restart); this is its runner: it takes the files, reads config.toml for a plan, writes the
/// planned file on a helper thread (`replaceFile`: fsync'd and renamed, so a power cut leaves the
/// old file or the new one), then has the host reload as for an edit by hand. Its clock is the
/// loop's: the tests run it on a virtual one.
public final class RemoteChanges {
    public static let configSizeLimit = 1 << 20

    let configPath: String
    let requestsPath: String
    let loop: EventLoop
    let log: Logger
    unowned let host: RemoteChangesHost
    let wallClock: () -> Int64
    var requests: RequestDirectory?
    var procedure: RemoteChangeProcedure
    /// Held changes wait on it for the write bucket; the write itself runs on `writer`.
    let timer: LoopTimer
    let writer: BlockingCall
    let identifyTimer: LoopTimer

    public init(configPath: String, requestsPath: String, loop: EventLoop, log: Logger, host: RemoteChangesHost,
                wallClock: @escaping () -> Int64 = wallClockSeconds) {
        self.configPath = configPath
        self.requestsPath = requestsPath
        self.loop = loop
        self.log = log
        self.host = host
        self.wallClock = wallClock
        procedure = RemoteChangeProcedure(startedMs: loop.now)
        timer = loop.makeTimer()
        writer = BlockingCall(loop: loop)
        identifyTimer = loop.makeTimer()
    }

    /// Watches the requests directory and takes what was left while the daemon was not running.
    public func start() {
        do {
            let r = try RequestDirectory(path: requestsPath)
            requests = r
            loop.watch(r.fd, lost: { [weak self] e in
                guard let self else { return }
                log.error("the requests directory's inotify descriptor broke (\(e)); changes from afar stop until a restart")
                loop.unwatch(r.fd)
            }) { [weak self] in
                guard let self else { return }
                r.drain()
                take()
            }
            take()
        } catch {
            log.warning("cannot watch \(requestsPath) for changes from afar (\(error)); editing \(configPath) still works")
        }
    }

    /// Every pending request, a bounded batch per loop turn: what is left is taken on the next
    /// turn without waiting for another inotify event.
    func take() {
        guard let requests, !host.isStopping else { return }
        let (batch, more) = requests.take()
        guard !batch.isEmpty else { return }
        let taken = batch.map { item in
            TakenRequest(name: item.name, request: item.bytes.mapError { RemoteRequestError.malformed("cannot read the request: \($0)") }
                .flatMap { RemoteRequest.decode($0) })
        }
        show(procedure.received(taken, now: loop.now))
        // Everything waiting is taken before anything is planned: one write for all of it.
        if more { return loop.post { [weak self] in self?.take() } }
        advance()
    }

    /// Whatever the procedure asks for next, until it waits for a write, the bucket or a request.
    func advance() {
        guard !host.isStopping else { return }
        let now = loop.now
        switch procedure.nextStep(now: now) {
        case .idle: break
        case .wait(let until):
            timer.schedule(afterMs: max(1, until - now)) { [weak self] in self?.advance() }
        case .plan(let settings):
            timer.cancel()
            let bytes: [UInt8]
            do {
                bytes = try readFile(configPath, limit: Self.configSizeLimit)
            } catch {
                let plan = RemoteChangePlan.refusing(settings, "\(configPath): cannot read config: \(error)")
                show(procedure.planned(plan, now: now).effects)
                return advance()
            }
            let (write, effects) = procedure.planned(RemoteChangePlan.make(settings, config: bytes, path: configPath), now: now)
            show(effects)
            guard let write else { return advance() }
            writeConfig(write)
        case .restart(let r):
            procedure.restartTaken()
            // Not under systemd nobody would start a new process: refused, the beacon stays on.
            guard host.canRestart else {
                return show([.report(request: r.summary, origin: r.origin, applied: false,
                                     message: "not running under systemd: nobody would start the daemon again")])
            }
            show([.report(request: r.summary, origin: r.origin, applied: true, message: "")])
            log.notice("change from afar\(from(r.origin)): restart: taking the beacon off air; systemd starts the service again")
            host.restartAsked()
        }
    }

    /// Off the loop: two fsyncs on a card mounted `sync` must not delay SIGTERM or the LEDs.
    func writeConfig(_ bytes: [UInt8]) {
        var st = stat()
        let mode = stat(configPath, &st) == 0 ? st.st_mode & 0o7777 : 0o644
        let file = StateFile(path: configPath)
        let path = configPath
        writer.start({
            do throws(Errno) {
                try file.write(bytes, mode: mode)
                return 0
            } catch {
                errno = error.rawValue
                return -1
            }
        }) { [weak self] e in
            guard let self else { return }
            let why = e.map { "cannot write \(path): \($0)\($0.isPermission ? " (the service needs ReadWritePaths= on its directory and write access to it)" : "")" }
            show(procedure.written(error: why))
            if e == nil { host.configWritten() }
            advance()
        }
    }

    func show(_ effects: [RemoteChangeEffect]) {
        for effect in effects {
            switch effect {
            case .note(let text): log.info("change from afar: \(text)")
            case .identify(let origin):
                log.notice("change from afar\(from(origin)): identify: the status LED strobes for \(RemoteRequest.identifySeconds) s")
                host.identify(true)
                identifyTimer.schedule(afterMs: RemoteRequest.identifySeconds * 1000) { [weak self] in self?.host.identify(false) }
                host.reported(RemoteChangeReport(request: "identify", origin: origin, applied: true, message: "", time: wallClock()))
            case .report(let request, let origin, let applied, let message):
                if applied {
                    log.notice("change from afar\(from(origin)): \(request)\(message.isEmpty ? ": written to \(configPath)" : ": \(message)")")
                } else {
                    log.error("change from afar refused\(from(origin)), the beacon stays as it is: \(request): \(message)")
                }
                host.reported(RemoteChangeReport(request: request, origin: origin, applied: applied, message: firstLine(message),
                                                 time: wallClock()))
            }
        }
    }

    func from(_ origin: String) -> String { origin.isEmpty ? "" : " (from \(origin))" }
}
