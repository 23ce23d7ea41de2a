import BeaconKit
import CLinux
import Glibc

/// Runs a call that can block in the kernel for seconds (HCIDEVUP runs the controller's whole
/// init; HCIDEVDOWN waits for pending commands) on a helper thread of its own, and reports the
/// result to the loop through an eventfd, so the loop never waits on the controller.
public final class BlockingCall {
    /// Shared with the helper thread: written there before the eventfd is signalled, read here
    /// after the loop sees it (the eventfd write/read orders the two).
    private final class Job: @unchecked Sendable {
        let body: @Sendable () -> Int32
        let done: FileDescriptor
        var result: Int32 = 0
        init(body: @escaping @Sendable () -> Int32, done: FileDescriptor) { self.body = body; self.done = done }
    }

    private let loop: EventLoop
    private var running: (job: Job, completion: (Errno?) -> Void)?
    public var isRunning: Bool { running != nil }

    public init(loop: EventLoop) { self.loop = loop }

    /// The thread may still be running (a hung HCIDEVUP): its result is then dropped unread.
    deinit { if let r = running { loop.unwatch(r.job.done) } }

    /// Starts `body` (a raw call returning -1 with errno on failure, as ioctl does) on a thread;
    /// `completion` runs on a later loop turn with nil or the errno, never inside this call. One
    /// call at a time: a call made while another runs is refused (`Errno.callInProgress`), and
    /// the running call still completes its own caller.
    public func start(_ body: @escaping @Sendable () -> Int32, completion: @escaping (Errno?) -> Void) {
        guard running == nil else { return loop.post { completion(.callInProgress) } }
        let efd: FileDescriptor
        do {
            efd = FileDescriptor(try syscall { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) })
        } catch {
            return loop.post { completion(error) }
        }
        let job = Job(body: body, done: efd)
        running = (job, completion)
        loop.watch(efd) { [weak self] in self?.finished() }
        var thread = pthread_t()
        var attr = pthread_attr_t()
        pthread_attr_init(&attr)
        pthread_attr_setdetachstate(&attr, Int32(PTHREAD_CREATE_DETACHED))
        let context = Unmanaged.passRetained(job).toOpaque()
        let rc = pthread_create(&thread, &attr, { raw in
            guard let raw else { return nil }
            let job = Unmanaged<Job>.fromOpaque(raw).takeRetainedValue()
            // EINTR is retried in the one wrapper, as everywhere else.
            do throws(Errno) {
                _ = try syscall { job.body() }
                job.result = 0
            } catch {
                job.result = -error.rawValue
            }
            var one: UInt64 = 1
            _ = try? syscall { write(job.done.rawValue, &one, 8) }
            return nil
        }, context)
        pthread_attr_destroy(&attr)
        if rc != 0 {
            Unmanaged<Job>.fromOpaque(context).release()
            loop.unwatch(efd)
            running = nil
            loop.post { completion(Errno(rc)) }
        }
    }

    /// On the loop turn that read the eventfd: already a turn of its own, as the caller was promised.
    private func finished() {
        guard let (job, completion) = running else { return }
        var v: UInt64 = 0
        _ = try? syscall { read(job.done.rawValue, &v, 8) }
        loop.unwatch(job.done)
        job.done.close()
        running = nil
        completion(job.result < 0 ? Errno(-job.result) : nil)
    }
}
