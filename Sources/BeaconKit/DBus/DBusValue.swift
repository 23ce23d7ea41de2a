/// The few D-Bus types bluetoothd's GATT API needs (D-Bus specification, "Type System"), as
/// values with their type. Pure: the wire format is in DBusWire.swift, no I/O anywhere here.
public indirect enum DBusType: Equatable, Sendable {
    case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double
    case string, objectPath, signature, unixFD, variant
    case array(DBusType)
    case structure([DBusType])
    case dictEntry(DBusType, DBusType)

    /// The type's signature ("y", "a{sv}", "(ss)").
    public var signature: String {
        switch self {
        case .byte: "y"; case .boolean: "b"; case .int16: "n"; case .uint16: "q"
        case .int32: "i"; case .uint32: "u"; case .int64: "x"; case .uint64: "t"; case .double: "d"
        case .string: "s"; case .objectPath: "o"; case .signature: "g"; case .unixFD: "h"; case .variant: "v"
        case .array(let e): "a" + e.signature
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .dictEntry(let k, let v): "{" + k.signature + v.signature + "}"
        }
    }

    /// Where values of this type start on the wire.
    var alignment: Int {
        switch self {
        case .byte, .signature, .variant: 1
        case .int16, .uint16: 2
        case .boolean, .int32, .uint32, .string, .objectPath, .unixFD, .array: 4
        case .int64, .uint64, .double, .structure, .dictEntry: 8
        }
    }

    var isBasic: Bool {
        switch self {
        case .array, .structure, .dictEntry, .variant: false
        default: true
        }
    }

    /// The complete types of `signature`, in order. The specification's limits hold: at most
    /// 255 bytes, arrays and structures each nested at most 32 deep, dict entries only as array
    /// elements with a basic key.
    public static func parse(signature: String) throws(DBusWireError) -> [DBusType] {
        let bytes = Array(signature.utf8)
        guard bytes.count <= 255 else { throw .badSignature(signature) }
        var i = 0
        var out: [DBusType] = []
        while i < bytes.count { out.append(try parseOne(bytes, &i, arrays: 0, structs: 0, inArray: false)) }
        return out
    }

    private static func parseOne(_ s: [UInt8], _ i: inout Int, arrays: Int, structs: Int, inArray: Bool) throws(DBusWireError) -> DBusType {
        let text = String(decoding: s, as: UTF8.self)
        guard i < s.count else { throw .badSignature(text) }
        let c = s[i]
        i += 1
        switch c {
        case UInt8(ascii: "y"): return .byte
        case UInt8(ascii: "b"): return .boolean
        case UInt8(ascii: "n"): return .int16
        case UInt8(ascii: "q"): return .uint16
        case UInt8(ascii: "i"): return .int32
        case UInt8(ascii: "u"): return .uint32
        case UInt8(ascii: "x"): return .int64
        case UInt8(ascii: "t"): return .uint64
        case UInt8(ascii: "d"): return .double
        case UInt8(ascii: "s"): return .string
        case UInt8(ascii: "o"): return .objectPath
        case UInt8(ascii: "g"): return .signature
        case UInt8(ascii: "h"): return .unixFD
        case UInt8(ascii: "v"): return .variant
        case UInt8(ascii: "a"):
            guard arrays < 32 else { throw .badSignature(text) }
            return .array(try parseOne(s, &i, arrays: arrays + 1, structs: structs, inArray: true))
        case UInt8(ascii: "("):
            guard structs < 32 else { throw .badSignature(text) }
            var fields: [DBusType] = []
            while i < s.count, s[i] != UInt8(ascii: ")") {
                fields.append(try parseOne(s, &i, arrays: arrays, structs: structs + 1, inArray: false))
            }
            guard i < s.count, !fields.isEmpty else { throw .badSignature(text) }
            i += 1
            return .structure(fields)
        case UInt8(ascii: "{"):
            guard inArray, structs < 32 else { throw .badSignature(text) }
            let key = try parseOne(s, &i, arrays: arrays, structs: structs + 1, inArray: false)
            let value = try parseOne(s, &i, arrays: arrays, structs: structs + 1, inArray: false)
            guard key.isBasic, i < s.count, s[i] == UInt8(ascii: "}") else { throw .badSignature(text) }
            i += 1
            return .dictEntry(key, value)
        default:
            throw .badSignature(text)
        }
    }
}

public indirect enum DBusValue: Equatable, Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16), uint16(UInt16), int32(Int32), uint32(UInt32), int64(Int64), uint64(UInt64)
    /// IEEE 754 bits as they are on the wire: nothing here computes with them.
    case double(bits: UInt64)
    case string(String)
    case objectPath(String)
    case signature(String)
    case unixFD(UInt32)
    /// The element type is kept: an empty array still has one.
    case array(DBusType, [DBusValue])
    /// `ay`, as one array of bytes: not a boxed value per byte (a megabyte from any local user
    /// must not become a million heap objects).
    case byteArray([UInt8])
    case structure([DBusValue])
    case dictEntry(DBusValue, DBusValue)
    case variant(DBusValue)

    public var type: DBusType {
        switch self {
        case .byte: .byte; case .boolean: .boolean; case .int16: .int16; case .uint16: .uint16
        case .int32: .int32; case .uint32: .uint32; case .int64: .int64; case .uint64: .uint64
        case .double: .double; case .string: .string; case .objectPath: .objectPath
        case .signature: .signature; case .unixFD: .unixFD; case .variant: .variant
        case .array(let e, _): .array(e)
        case .byteArray: .array(.byte)
        case .structure(let fields): .structure(fields.map(\.type))
        case .dictEntry(let k, let v): .dictEntry(k.type, v.type)
        }
    }

    /// An `a{sv}` dictionary, the properties and options of every BlueZ call.
    public static func properties(_ entries: [(String, DBusValue)]) -> DBusValue {
        .array(.dictEntry(.string, .variant), entries.map { .dictEntry(.string($0.0), .variant($0.1)) })
    }

    /// `as`.
    public static func strings(_ items: [String]) -> DBusValue { .array(.string, items.map { .string($0) }) }

    /// `ay`.
    public static func bytes(_ items: [UInt8]) -> DBusValue { .byteArray(items) }

    public var stringValue: String? {
        switch self {
        case .string(let s), .objectPath(let s), .signature(let s): s
        case .variant(let v): v.stringValue
        default: nil
        }
    }

    /// The entries of a dictionary (`a{..}`) whose keys are strings; nil for anything else.
    public var dictionary: [(key: String, value: DBusValue)]? {
        guard case .array(.dictEntry, let entries) = self else { return nil }
        return entries.compactMap { entry in
            guard case .dictEntry(let k, let v) = entry, let key = k.stringValue else { return nil }
            return (key, v)
        }
    }

    /// The integer inside a (variant of an) unsigned or signed integer.
    public var integerValue: Int? {
        switch self {
        case .byte(let v): Int(v)
        case .uint16(let v): Int(v)
        case .int16(let v): Int(v)
        case .uint32(let v): Int(v)
        case .int32(let v): Int(v)
        case .uint64(let v): Int(exactly: v)
        case .int64(let v): Int(exactly: v)
        case .variant(let v): v.integerValue
        default: nil
        }
    }
}
