import XCTest
@testable import BeaconKit

/// What a local user's flood of unicast signals costs the daemon's bus reader (the testbed's
/// gatt-identity-dbus-flood sends the same stream): every small signal's header is decoded to
/// learn it is not for us, every 1.1 MB one dropped as it streams in. The faster this is, the
/// less the bus queues for us, and a ReadValue from bluetoothd waits behind what it queues.
/// Prints figures; asserts only the results.
final class DBusFloodBenchmarkTests: XCTestCase {
    func testFloodReadingBenchmark() throws {
        var stream: [UInt8] = []
        var serial: UInt32 = 1
        let rounds = 3, smallPerRound = 500
        for _ in 0..<rounds {
            serial += 1
            stream += DBusMessage(kind: .signal, flags: 1, serial: serial, path: "/flood", interface: "org.example.Flood",
                                  member: "Big", destination: ":1.3", body: [.bytes([UInt8](repeating: 0x5a, count: 1_100_000))]).encoded()
            for _ in 0..<smallPerRound {
                serial += 1
                stream += DBusMessage(kind: .signal, flags: 1, serial: serial, path: "/flood", interface: "org.example.Flood",
                                      member: "Small", destination: ":1.3", body: [.bytes(Array("abc".utf8))]).encoded()
            }
        }
        let clock = ContinuousClock()
        let passes = 5
        var reader = DBusMessageReader()
        var small = 0, dropped = 0
        let t = try clock.measure {
            for _ in 0..<passes {
                var i = 0
                while i < stream.count {   // as the daemon reads: 8 KiB at a time
                    let end = min(i + 8192, stream.count)
                    let messages = try reader.feed(Array(stream[i..<end])) { _ in false }
                    small += messages.filter { $0.member == "Small" && $0.bodySkipped }.count
                    dropped += reader.dropped.count
                    i = end
                }
            }
        }
        XCTAssertEqual(small, passes * rounds * smallPerRound)
        XCTAssertEqual(dropped, passes * rounds)
        let ms = Double(t.components.seconds) * 1000 + Double(t.components.attoseconds / 1_000_000_000_000) / 1000
        let mb = Double(stream.count * passes) / 1e6
        print("D-Bus flood read: \(passes * rounds * smallPerRound) small signals and \(passes * rounds) 1.1 MB ones, \(mb) MB, in \(ms) ms: \(ms / mb) ms/MB, \(ms * 1000 / Double(small)) us per small signal (the big ones' share included)")
    }
}
