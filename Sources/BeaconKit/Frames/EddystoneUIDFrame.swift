/// Eddystone-UID: a 10-byte namespace and a 6-byte instance, with the TX power at 0 m.
public struct EddystoneUIDFrame: ExpectableFrame, ConfigurableFrame, Equatable {
    public static let traits = FrameTraits(
        name: "eddystone-uid", model: "Google Eddystone-UID", switchedBy: Eddystone.switchedBy,
        configKeys: ["namespace", "instance", "power_0m"], configHint: "namespace and instance (UID)",
        identifyingKeys: ["namespace", "instance"], calibrationLine: Eddystone.calibrationLine)
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

    public var powerAt1m: Int? { Eddystone.powerAt1m(power0m) }

    /// The TX power plays no part in matching.
    static func expected(_ config: inout ConfigValidator, _ table: TOMLTable, name: String) -> EddystoneUIDFrame? {
        let namespace = config.hexDigits(table, name, "namespace", digits: 20, example: "\"edd1ebeac04e5defa017\"", required: true)
        let instance = config.hexDigits(table, name, "instance", digits: 12, example: "\"0123456789ab\"", required: true)
        guard let namespace, let instance else { return nil }
        return EddystoneUIDFrame(namespace: namespace, instance: instance, power0m: 0)
    }

    /// `[eddystone]` namespace and instance: both, or neither (then no UID frame).
    static func configured(_ config: inout ConfigValidator, _ t: TOMLTable, _ context: FrameConfigContext) -> EddystoneUIDFrame? {
        let power = Eddystone.power0m(&config, t, context.beacon)
        let namespace = config.hexDigits(t, "eddystone", "namespace", digits: 20, example: "\"edd1ebeac04e5defa017\"")
        let instance = config.hexDigits(t, "eddystone", "instance", digits: 12, example: "\"0123456789ab\"")
        switch (namespace, instance) {
        case (let n?, let i?):
            return EddystoneUIDFrame(namespace: n, instance: i, power0m: power)
        case (_?, nil) where t.entry("instance") == nil:
            // Missing keys: a misspelt `instanc = ...` explains them and is reported instead.
            if let e = t.entry("namespace") { config.report("eddystone.namespace needs eddystone.instance (12 hex digits) too: the UID frame sends both", at: e.keyPosition, rank: .missing, key: "eddystone.instance") }
        case (nil, _?) where t.entry("namespace") == nil:
            if let e = t.entry("instance") { config.report("eddystone.instance needs eddystone.namespace (20 hex digits) too: the UID frame sends both", at: e.keyPosition, rank: .missing, key: "eddystone.namespace") }
        default: break
        }
        return nil
    }
}
