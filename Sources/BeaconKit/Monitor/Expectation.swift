/// One beacon frame the monitor expects to hear (`[expect.NAME]`): its type and the fields that
/// identify it, exactly as `Sighting.identifyingFields` gives them for a frame heard on air.
public struct Expectation: Equatable, Sendable {
    /// NAME of `[expect.NAME]`: 1-64 of `A-Z a-z 0-9 _ -` (an MQTT topic level, a Prometheus label).
    public var name: String
    /// The frame's name: an `ExpectableFrame` of `BeaconFrames.types`.
    public var type: String
    /// The identifying fields in display order (the frame type's
    /// `FrameTraits.identifyingKeys`), keys and values as scan prints them.
    public var fields: [FrameField]

    public static let nameMaxLength = 64

    public init(name: String, type: String, fields: [FrameField]) {
        self.name = name; self.type = type; self.fields = fields
    }

    /// The expectation of exactly `frame`'s identifying fields (what a sighting of it would show).
    public init(name: String, frame: any BeaconFrame) {
        self.init(name: name, type: frame.name, fields: frame.identifyingFields)
    }

    /// Whether `s` is a sighting of this beacon frame: same type, same identifying fields
    /// (keys and values compared byte for byte). Never true for a frame without IDs (TLM).
    public func matches(_ s: Sighting) -> Bool { matches(type: s.type, ids: s.identifyingFields) }

    /// As `matches(_:)`, with the sighting's type and identifying fields computed once.
    func matches(type t: String, ids: [FrameField]) -> Bool {
        guard !fields.isEmpty, ids.count == fields.count, sameKey(t, type) else { return false }
        return zip(ids, fields).allSatisfy { sameKey($0.key, $1.key) && sameKey($0.value, $1.value) }
    }

    /// The same frame as `other` (same type and identifying fields), whatever the names.
    func sameFrame(as other: Expectation) -> Bool { other.matches(type: type, ids: fields) }

    /// A valid name: 1-64 of `A-Z a-z 0-9 _ -`.
    public static func isValidName(_ s: String) -> Bool {
        !s.utf8.isEmpty && s.utf8.count <= nameMaxLength && s.utf8.allSatisfy(isBareKeyByte)
    }

    /// The identifying fields as one line: "2f234454-... major=1 minor=2".
    public var idText: String {
        guard let first = fields.first else { return "" }
        return ([first.text] + fields.dropFirst().map { "\($0.key)=\($0.text)" }).joined(separator: " ")
    }
}
