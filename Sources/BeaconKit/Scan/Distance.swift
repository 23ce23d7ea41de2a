#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How close a beacon seems, the three classes beacon apps show.
public enum Proximity: String, Equatable, Sendable {
    case immediate, near, far, unknown

    /// immediate under 0.5 m, near under 3 m, far beyond.
    public init(distanceMeters d: Double?) {
        guard let d else { self = .unknown; return }
        self = d < 0.5 ? .immediate : d < 3 ? .near : .far
    }
}

/// Distance from RSSI and the beacon's REFERENCE RSSI (dBm at 1 m), with the curve fitted by
/// Radius Networks for the AltBeacon / Android Beacon Library:
/// ratio = rssi / power; d = ratio^10 if ratio < 1, else 0.89976 * ratio^7.7095 + 0.111.
/// It is a rough estimate: walls, bodies and antennas move RSSI by 10 dB and more.
public enum DistanceEstimate {
    public static func meters(rssi: Int, power: Int) -> Double? {
        // HCI reports 127 when RSSI is not available; 0 dBm as either figure makes no ratio.
        guard rssi < 0, power < 0, rssi >= -127, power >= -127 else { return nil }
        let ratio = Double(rssi) / Double(power)
        if ratio < 1 { return pow(ratio, 10) }
        return 0.89976 * pow(ratio, 7.7095) + 0.111
    }

    /// Two decimals, without Foundation's formatting: "1.02", "0.19", "12.50".
    public static func format(_ d: Double) -> String {
        guard d.isFinite, d >= 0 else { return "-" }
        let hundredths = d > 1e9 ? 100_000_000_000 : Int((d * 100).rounded())
        let frac = hundredths % 100
        return "\(hundredths / 100)." + (frac < 10 ? "0" : "") + "\(frac)"
    }
}
