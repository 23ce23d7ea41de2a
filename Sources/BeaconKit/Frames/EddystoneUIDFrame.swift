/// Eddystone-UID: a 10-byte namespace and a 6-byte instance, with the TX power at 0 m.
public struct EddystoneUIDFrame: BeaconFrame, Equatable {
    public static let name = "eddystone-uid"
    public var namespace: [UInt8]
    public var instance: [UInt8]
    public var power0m: Int8

    public init(namespace: [UInt8], instance: [UInt8], power0m: Int8) {
        self.namespace = namespace; self.instance = instance; self.power0m = power0m
    }

    public func advertisingData(_: Telemetry) -> [UInt8] {
        var body: [UInt8] = [Eddystone.uid, UInt8(bitPattern: power0m)]
        body += exactly(10, namespace)
        body += exactly(6, instance)
        body += [0, 0]
        return Eddystone.advertisingData(body)
    }

    public var fields: [FrameField] {
        [FrameField("namespace", hexString(namespace)), FrameField("instance", hexString(instance)), .number("power_0m", power0m)]
    }

    /// 18 bytes of frame, or 20 with the reserved two (both are seen in the wild).
    public static func decode(_ data: ArraySlice<UInt8>) -> EddystoneUIDFrame? {
        guard let d = Eddystone.serviceData(data, type: Eddystone.uid), d.count == 18 || d.count == 20 else { return nil }
        let s = d.startIndex
        return EddystoneUIDFrame(namespace: Array(d[(s + 2)..<(s + 12)]), instance: Array(d[(s + 12)..<(s + 18)]),
                                 power0m: Int8(bitPattern: d[s + 1]))
    }

    public static let identifyingKeys = ["namespace", "instance"]
    public var referencePower: ReferencePower? { .zeroMetres(power0m) }
    public static func calibrationLine(rssiAt1m: Int) -> String? { Eddystone.calibrationLine(rssiAt1m: rssiAt1m) }

    /// The TX power plays no part in matching.
    public static func expected(_ table: inout ExpectationTable) -> EddystoneUIDFrame? {
        let namespace = table.hexDigits("namespace", digits: 20, example: "\"edd1ebeac04e5defa017\"")
        let instance = table.hexDigits("instance", digits: 12, example: "\"0123456789ab\"")
        guard let namespace, let instance else { return nil }
        return EddystoneUIDFrame(namespace: namespace, instance: instance, power0m: 0)
    }
}
