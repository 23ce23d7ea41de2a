import BeaconKit
import XCTest
@testable import BeaconLinux

/// The one command path: one command in flight, deadlines as loop timers, completions on later turns.
final class CommandChannelTests: ScriptedTestCase {
    /// What the channel told its delegate.
    final class Heard: HCICommandChannelDelegate {
        var sent: [HCIOpcode] = []
        var events: [HCIEvent] = []
        var lost: [Errno] = []
        func channel(_ channel: HCICommandChannel, sent opcode: HCIOpcode, _ parameters: [UInt8]) { sent.append(opcode) }
        func channel(_ channel: HCICommandChannel, received event: HCIEvent) { events.append(event) }
        func channel(_ channel: HCICommandChannel, lost error: Errno) { lost.append(error) }
    }
    let heard = Heard()

    func channel(_ c: ScriptedHCIController) throws -> HCICommandChannel {
        let ch = HCICommandChannel(index: c.index, transport: try c.openTransport(), loop: loop, delegate: heard)
        keep.append(ch)
        return ch
    }

    func testCompletionsNeverRunInsideSend() throws {
        let c = controller()
        let ch = try channel(c)
        var insideSend = false
        var results: [Bool] = []
        insideSend = true
        ch.sendRaw(ReadLocalVersion(), timeoutMs: 1000) { r in
            XCTAssertFalse(insideSend)
            results.append((try? r.get()) != nil)
            // A command sent from a completion completes on a later turn too.
            insideSend = true
            ch.sendRaw(LEReadLocalSupportedFeatures(), timeoutMs: 1000) { r in
                XCTAssertFalse(insideSend)
                results.append((try? r.get()) != nil)
            }
            insideSend = false
        }
        insideSend = false
        loop.run(forMs: 100)
        XCTAssertEqual(results, [true, true])
    }

    func testRepliesAreDecodedAsTheCommandsReplyAndAShortOneIsAFailure() throws {
        let c = controller()
        let ch = try channel(c)
        var version: Result<any HCIReply, HCICommandFailure>?
        ch.send(ReadLocalVersion(), timeoutMs: 1000, reply: { version = $0 })
        loop.run(atMostMs: 100) { version != nil }
        XCTAssertEqual(try version?.get() as? LocalVersionReply, LocalVersionReply(hciVersion: c.hciVersion, manufacturer: 0x000f))
        c.once[.leReadLocalFeatures] = [.returnParameters([0x00, 0x10])]
        var features: Result<any HCIReply, HCICommandFailure>?
        ch.send(LEReadLocalSupportedFeatures(), timeoutMs: 1000, reply: { features = $0 })
        loop.run(atMostMs: 100) { features != nil }
        guard case .failure(let f)? = features else { return XCTFail("\(String(describing: features))") }
        XCTAssertEqual(f, .shortReply(.leReadLocalFeatures))
        XCTAssertEqual(ArmFailure(f), .rejected("LE Read Local Supported Features (0x2003) answered with too few return parameters"))
    }

    func testAFailedWriteCompletesOnALaterTurn() throws {
        let c = controller()
        let ch = try channel(c)
        c.externalDown()
        var insideSend = true
        var result: Result<[UInt8], HCICommandFailure>?
        ch.sendRaw(ReadLocalVersion(), timeoutMs: 1000) { result = $0; XCTAssertFalse(insideSend) }
        insideSend = false
        loop.run(atMostMs: 100) { result != nil }
        guard case .failure(.io(let e))? = result else { return XCTFail("\(String(describing: result))") }
        XCTAssertEqual(e, .networkDown)
    }

    func testTimeoutFiresAtTheDeadline() throws {
        let c = controller()
        c.silent = true
        let ch = try channel(c)
        let start = loop.now
        var at: Int64?
        var result: Result<[UInt8], HCICommandFailure>?
        ch.sendRaw(ReadLocalVersion(), timeoutMs: 300) { result = $0; at = self.loop.now - start }
        loop.run(forMs: 1000)
        XCTAssertEqual(at, 300)
        XCTAssertEqual(result.map { "\($0)" }, "\(Result<[UInt8], HCICommandFailure>.failure(.timeout(.readLocalVersion)))")
        XCTAssertTrue(ch.isIdle)
    }

    func testQueuedCommandsGoOneAtATimeEachWithItsOwnDeadline() throws {
        let c = controller()
        c.answer(.readLocalVersion, .silence)
        let ch = try channel(c)
        let start = loop.now
        var done: [(String, Int64)] = []
        ch.sendRaw(ReadLocalVersion(), timeoutMs: 300) { r in done.append(((try? r.get()) == nil ? "timeout" : "ok", self.loop.now - start)) }
        ch.sendRaw(LEReadLocalSupportedFeatures(), timeoutMs: 300) { r in done.append(((try? r.get()) == nil ? "fail" : "ok", self.loop.now - start)) }
        XCTAssertEqual(c.log, [.readLocalVersion], "the second waits for the first")
        loop.run(forMs: 1000)
        XCTAssertEqual(done.map(\.0), ["timeout", "ok"])
        XCTAssertEqual(done.first?.1, 300)
        XCTAssertEqual(c.log, [.readLocalVersion, .leReadLocalFeatures])
    }

    func testLateAnswerAfterTimeoutIsIgnored() throws {
        let c = controller()
        c.answerDelayMs = 500
        let ch = try channel(c)
        var results: [String] = []
        ch.sendRaw(ReadLocalVersion(), timeoutMs: 300) { r in results.append((try? r.get()) == nil ? "version timeout" : "version ok") }
        // Sent after the first timed out; its own answer comes 500 ms after it, the first's late answer at 500.
        ch.sendRaw(LEReadLocalSupportedFeatures(), timeoutMs: 1000) { r in
            results.append((try? r.get()).map { "features \($0.count)" } ?? "features failed")
        }
        loop.run(forMs: 400)
        XCTAssertEqual(results, ["version timeout"])
        loop.run(forMs: 150)   // the late Read Local Version answer arrives now
        XCTAssertEqual(results, ["version timeout"], "a late answer is not the next command's")
        XCTAssertFalse(ch.isIdle)
        loop.run(forMs: 1000)
        XCTAssertEqual(results, ["version timeout", "features 9"])
    }

    func testAbandonAllDropsCompletions() throws {
        let c = controller()
        c.answerDelayMs = 50
        let ch = try channel(c)
        var calls = 0
        ch.sendRaw(ReadLocalVersion(), timeoutMs: 1000) { _ in calls += 1 }
        ch.sendRaw(LEReadLocalSupportedFeatures(), timeoutMs: 1000) { _ in calls += 1 }
        ch.abandonAll()
        XCTAssertTrue(ch.isIdle)
        var after: Result<[UInt8], HCICommandFailure>?
        ch.sendRaw(LEReadNumberOfSupportedAdvertisingSets(), timeoutMs: 1000) { after = $0 }
        loop.run(forMs: 2000)
        XCTAssertEqual(calls, 0)
        XCTAssertEqual(try XCTUnwrap(after).get(), [0, 4], "the channel works on after abandoning")
        XCTAssertEqual(c.log, [.readLocalVersion, .leReadNumberOfSupportedAdvertisingSets], "the queued one never written")
    }

    func testFailingCommandStatusCompletesWithItsStatus() throws {
        let c = controller()
        c.answer(.leSetAdvertiseEnable, .commandStatus(.commandDisallowed))
        let ch = try channel(c)
        var result: Result<[UInt8], HCICommandFailure>?
        ch.sendRaw(LESetAdvertiseEnable(true), timeoutMs: 1000) { result = $0 }
        loop.run(atMostMs: 100) { result != nil }
        guard case .failure(.status(let op, let st))? = result else { return XCTFail("\(String(describing: result))") }
        XCTAssertEqual(op, .leSetAdvertiseEnable)
        XCTAssertEqual(st, .commandDisallowed)
    }

    func testLostTransportFailsWhatIsPendingAndCloses() throws {
        let c = controller()
        c.answerDelayMs = 100
        let ch = try channel(c)
        var results: [Result<[UInt8], HCICommandFailure>] = []
        ch.sendRaw(ReadLocalVersion(), timeoutMs: 1000) { results.append($0) }
        ch.sendRaw(LEReadLocalSupportedFeatures(), timeoutMs: 1000) { results.append($0) }
        c.unplug()
        loop.run(forMs: 2000)
        XCTAssertEqual(heard.lost, [.noDevice])
        XCTAssertEqual(results.count, 2)
        XCTAssertTrue(results.allSatisfy { if case .failure(.io(.noDevice)) = $0 { true } else { false } })
        XCTAssertTrue(ch.isClosed)
        var late = false
        ch.sendRaw(ReadLocalVersion(), timeoutMs: 100) { _ in late = true }
        loop.run(forMs: 500)
        XCTAssertFalse(late, "nothing completes after close")
    }

    func testHardwareErrorGoesToTheDelegate() throws {
        let c = controller()
        _ = try channel(c)
        c.hardwareError(code: 7)
        loop.run(forMs: 10)
        XCTAssertEqual(heard.events, [.hardwareError(code: 7)])
    }
}
