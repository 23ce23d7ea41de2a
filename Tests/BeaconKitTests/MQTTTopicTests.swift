import XCTest
@testable import BeaconKit

/// Topic names, topic filters, and matching (MQTT 3.1.1 section 4.7), the examples from the
/// specification among them.
final class MQTTTopicTests: XCTestCase {
    func testTopicNames() {
        for good in ["a", "a/b", "/", "//", "/finance", "beacon/hall/status", "$SYS/x", "caf\u{E9}", " ", "a b"] {
            XCTAssertNoThrow(try MQTTTopic.validateName(good), good)
        }
        let cases: [(String, MQTTWireError)] = [
            ("", .emptyTopic), ("+", .wildcardInTopicName), ("#", .wildcardInTopicName), ("a/+/b", .wildcardInTopicName),
            ("a/#", .wildcardInTopicName), ("a+", .wildcardInTopicName), ("a\u{0}", .nulCharacter),
            (String(repeating: "é", count: 32_768), .stringTooLong(65_536)),
        ]
        for (bad, error) in cases {
            XCTAssertThrowsError(try MQTTTopic.validateName(bad), bad) { XCTAssertEqual($0 as? MQTTWireError, error) }
        }
        XCTAssertNoThrow(try MQTTTopic.validateName(String(repeating: "x", count: 65_535)))
    }

    func testTopicFilters() {
        for good in ["#", "+", "+/+", "/+", "a/#", "a/+/b", "+/tennis/#", "sport/tennis/#", "sport/+/player1", "$SYS/#", "a", "/", "+/"] {
            XCTAssertNoThrow(try MQTTTopic.validateFilter(good), good)
        }
        let cases: [(String, MQTTWireError)] = [
            ("", .emptyTopic), ("a#", .badTopicFilter), ("sport/tennis#", .badTopicFilter), ("a/#/b", .badTopicFilter),
            ("#/", .badTopicFilter), ("##", .badTopicFilter), ("a+", .badTopicFilter), ("sport+", .badTopicFilter),
            ("+a/b", .badTopicFilter), ("++", .badTopicFilter), ("a/\u{0}", .nulCharacter),
        ]
        for (bad, error) in cases {
            XCTAssertThrowsError(try MQTTTopic.validateFilter(bad), bad) { XCTAssertEqual($0 as? MQTTWireError, error) }
        }
    }

    func testMatching() {
        let yes: [(String, String)] = [
            // 4.7.1.2: "sport/tennis/player1/#" and its three examples; "sport/#" matches "sport".
            ("sport/tennis/player1/#", "sport/tennis/player1"), ("sport/tennis/player1/#", "sport/tennis/player1/ranking"),
            ("sport/tennis/player1/#", "sport/tennis/player1/score/wimbledon"), ("sport/#", "sport"), ("#", "sport"),
            ("#", "a/b/c"), ("#", "/"),
            // 4.7.1.3
            ("sport/tennis/+", "sport/tennis/player1"), ("sport/tennis/+", "sport/tennis/player2"), ("sport/+", "sport/"),
            ("+/+", "/finance"), ("/+", "/finance"), ("+", "a"), ("+/tennis/#", "sport/tennis/x/y"),
            // 4.7.2: '$' topics only through filters not starting with a wildcard.
            ("$SYS/#", "$SYS/monitor/Clients"), ("$SYS/monitor/+", "$SYS/monitor/Clients"), ("$SYS", "$SYS"),
            ("a/$b", "a/$b"), ("+/$b", "a/$b"),
            ("a/b", "a/b"), ("homeassistant/status", "homeassistant/status"), ("caf\u{E9}", "caf\u{E9}"),
        ]
        let no: [(String, String)] = [
            ("sport/tennis/+", "sport/tennis/player1/ranking"), ("sport/+", "sport"), ("+", "/finance"),
            ("#", "$SYS/monitor/Clients"), ("+/monitor/Clients", "$SYS/monitor/Clients"), ("#", "$SYS"),
            ("a/b", "a/b/"), ("a/b", "a"), ("a", "a/b"), ("a/+", "a"), ("a/+/c", "a/b"), ("a/b/#", "a"),
            // Case sensitive (4.7.3), byte for byte: precomposed é is not e + U+0301 though Swift calls them equal.
            ("ACCOUNTS", "Accounts"), ("caf\u{E9}", "cafe\u{301}"), ("cafe\u{301}", "caf\u{E9}"),
            // Invalid filters and names match nothing.
            ("a#", "a#"), ("a/+", "a/+"), ("", ""), ("#", ""), ("+", "a\u{0}"),
        ]
        for (filter, topic) in yes { XCTAssertTrue(MQTTTopic.matches(filter: filter, topic: topic), "\(filter) \(topic)") }
        for (filter, topic) in no { XCTAssertFalse(MQTTTopic.matches(filter: filter, topic: topic), "\(filter) \(topic)") }
        XCTAssertEqual("caf\u{E9}", "cafe\u{301}", "Swift compares strings by canonical equivalence")
    }

    /// A filter without wildcards matches exactly itself.
    func testAFilterWithoutWildcardsMatchesOnlyItself() {
        let topics = ["a", "a/b", "/", "a//b", "b/a", "$x", "a/b/c"]
        for f in topics { for t in topics { XCTAssertEqual(MQTTTopic.matches(filter: f, topic: t), f == t, "\(f) \(t)") } }
    }
}
