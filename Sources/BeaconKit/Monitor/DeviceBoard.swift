// Issue 48: what Home Assistant's device registry shows of the machine beside the software, as
// ESPHome's and ESPresense's devices carry theirs: the board's model and serial (hw_version: the
// MQTT device schema of HA 2024.1, the oldest supported, has no serial_number and refuses the
// whole entity for one), the area monitor.toml names (suggested_area: where HA puts a new
// device), and on the local beacon's device its Bluetooth address (a `bluetooth` connection). Only that device carries the address:
// HA merges devices that share a connection, and the observer often scans on the same adapter.

public struct DeviceBoard: Equatable, Sendable {
    /// The device tree's `model`: "Raspberry Pi 3 Model B Rev 1.2"; nil without one.
    public var model: String?
    /// The board's serial as 16 hex digits (the device tree's `serial-number`); nil without one.
    public var serial: String?
    /// `[monitor] area`.
    public var area: String?

    public init(model: String? = nil, serial: String? = nil, area: String? = nil) {
        self.model = model; self.serial = serial; self.area = area
    }

    /// The device tree's `model` property as read (NUL-terminated), nil when empty or not text.
    public static func model(fromDeviceTree bytes: [UInt8]) -> String? {
        var text = bytes[...]
        while let last = text.last, last == 0 || last == 0x0a || last == 0x20 { text = text.dropLast() }
        guard (1...128).contains(text.count), text.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) else { return nil }
        return String(decoding: text, as: UTF8.self)
    }

    /// A serial as the registry shows it: 16 lowercase hex digits, as the Pi's firmware prints it.
    public static func serialText(_ serial: UInt64) -> String {
        let hex = String(serial, radix: 16)
        return String(repeating: "0", count: max(0, 16 - hex.count)) + hex
    }

    /// The device block's members for this board (each with its leading comma); `address`: the
    /// local beacon's Bluetooth address (AA:BB:CC:DD:EE:FF), its device only.
    func deviceMembers(address: String? = nil) -> String {
        var out = ""
        switch (model, serial) {
        case let (m?, s?): out += ",\"hw_version\":" + jsonString("\(m) (serial \(s))")
        case let (m?, nil): out += ",\"hw_version\":" + jsonString(m)
        case let (nil, s?): out += ",\"hw_version\":" + jsonString("serial \(s)")
        case (nil, nil): break
        }
        if let area { out += ",\"suggested_area\":" + jsonString(area) }
        if let address { out += ",\"connections\":[[\"bluetooth\"," + jsonString(address) + "]]" }
        return out
    }
}
