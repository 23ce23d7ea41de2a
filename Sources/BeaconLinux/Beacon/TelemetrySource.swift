import BeaconKit
import Glibc

/// Reads the board for the TLM frame; the advertiser (its runner) asks, its procedure is handed
/// the reading. Tests give fixed readings.
public protocol BoardReader: Sendable {
    /// The reading now; `now`: the loop's clock, kept with it.
    func read(now: Int64) -> BoardReading
}

/// What the Eddystone-TLM frame reports of the board, read from the system (SPEC §3): uptime
/// since the machine booted (the beacon's power-up) and the SoC temperature from the first
/// readable thermal zone. (The advertising events the controller was asked to send are the
/// procedure's own `AdvertisingCounter`.)
public struct TelemetrySource: BoardReader {
    public let thermalPath: String

    public init(thermalPath: String = "/sys/class/thermal/thermal_zone0/temp") {
        self.thermalPath = thermalPath
    }

    public func read(now: Int64) -> BoardReading {
        var ts = timespec()
        clock_gettime(CLOCK_BOOTTIME, &ts)
        let bootMs = Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
        return BoardReading(uptimeDeciseconds: UInt32(clamping: bootMs / 100), temperature: temperature(), readAtMs: now)
    }

    /// nil when there is no readable thermal zone (as in a VM): TLM then says "not supported".
    func temperature() -> Int16? {
        millidegrees().map { Telemetry.fixed88(millidegrees: $0) }
    }

    /// The thermal zone's reading (millidegrees), nil without a readable one; the monitor
    /// publishes it too.
    public func millidegrees() -> Int64? {
        guard let bytes = try? readFile(thermalPath, limit: 64) else { return nil }
        var v: Int64 = 0, sign: Int64 = 1, digits = 0
        for (i, b) in bytes.enumerated() {
            if i == 0, b == UInt8(ascii: "-") { sign = -1; continue }
            guard b >= 0x30, b <= 0x39, digits < 12 else { break }
            v = v * 10 + Int64(b - 0x30)
            digits += 1
        }
        return digits == 0 ? nil : sign * v
    }
}
