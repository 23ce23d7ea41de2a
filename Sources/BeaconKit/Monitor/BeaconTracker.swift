/// What the monitor knows of one expected beacon.
public struct BeaconState: Equatable, Sendable {
    public var name: String
    /// False before the first sighting and once `silent_after_s` pass without one.
    public var heard: Bool
    public var everHeard: Bool
    /// Monotonic ms of the last sighting.
    public var lastSeenMs: Int64?
    /// Unix seconds of the last sighting.
    public var lastSeenWall: Int64?
    /// Sightings matched since start.
    public var adverts: UInt64
    /// `RSSIWindow.trimmedMean` of the sightings since the beacon was last heard again; nil
    /// while silent or when no sighting had an RSSI.
    public var rssi: Double?
    /// The last sender's address.
    public var address: String?
    /// The last Eddystone-TLM from that address.
    public var tlm: TLMReading?
    /// Times the TLM uptime went backwards.
    public var reboots: UInt64

    public init(name: String) {
        self.name = name; heard = false; everHeard = false; adverts = 0; reboots = 0
    }
}

/// What an Eddystone-TLM frame said.
public struct TLMReading: Equatable, Sendable {
    public var uptimeS: Double
    public var advertCount: UInt32
    /// nil: "not supported" (0x8000 on air).
    public var temperatureC: Double?
    /// nil: "not battery powered" (0 on air).
    public var batteryMV: UInt16?

    public init(uptimeS: Double, advertCount: UInt32, temperatureC: Double?, batteryMV: UInt16?) {
        self.uptimeS = uptimeS; self.advertCount = advertCount; self.temperatureC = temperatureC; self.batteryMV = batteryMV
    }

    /// From a received frame's telemetry: uptime in 0.1 s, temperature in 8.8 fixed point.
    public init(_ t: Telemetry) {
        self.init(uptimeS: Double(t.uptimeDeciseconds) / 10, advertCount: t.advertisingCount,
                  temperatureC: t.temperature.map { Double($0) / 256 },
                  batteryMV: t.batteryMillivolts == 0 ? nil : t.batteryMillivolts)
    }
}

/// The last `size` RSSI readings and their trimmed mean, as beacon libraries smooth RSSI (SPEC
/// §10: AirLocate averages the middle 80 %, the Android Beacon Library clips about 10 % at each
/// end): sorted, `count / 10` (rounded down) dropped at each end, the rest averaged. So 20
/// samples lose the 2 lowest and the 2 highest; fewer than 10 are all averaged.
public struct RSSIWindow: Equatable, Sendable {
    public static let size = 20
    /// HCI's "RSSI not available".
    public static let notAvailable = 127
    /// Oldest first once full (a ring: `next` is the slot to overwrite).
    private var samples: [Int] = []
    private var next = 0

    public init() {}

    public var count: Int { samples.count }

    /// Adds a reading in dBm; 127 ("not available") is ignored.
    public mutating func add(_ dbm: Int) {
        guard dbm != Self.notAvailable else { return }
        if samples.count < Self.size {
            samples.append(dbm)
        } else {
            samples[next] = dbm
            next = (next + 1) % Self.size
        }
    }

    public mutating func removeAll() { samples.removeAll(); next = 0 }

    public var trimmedMean: Double? {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        let cut = sorted.count / 10
        let kept = sorted[cut..<(sorted.count - cut)]
        return Double(kept.reduce(0, +)) / Double(kept.count)
    }
}

public enum TrackerEvent: Equatable, Sendable {
    /// Silent (or never heard) -> heard; `first`: never heard before.
    case heard(name: String, first: Bool)
    /// Heard -> silent; or never heard within `silent_after_s` of start (`lastSeenWall` nil).
    case silent(name: String, lastSeenWall: Int64?)
    /// The beacon's TLM uptime went backwards: it restarted. `uptimeS` is the new uptime.
    case rebooted(name: String, uptimeS: Double)
}

/// Which expected beacons are heard, from the sightings and a monotonic clock the caller
/// supplies. Pure.
public struct BeaconTracker: Sendable {
    public let expectations: [Expectation]
    public let silentAfterMs: Int64
    public let startMs: Int64
    /// Same order as `expectations`.
    public private(set) var states: [BeaconState]
    /// Every advertising report counted by `countAdvert()` (a deaf scanner shows as a flat line).
    public private(set) var advertsTotal: UInt64 = 0
    private var windows: [RSSIWindow]
    /// Never heard, and already reported silent for it.
    private var neverHeardReported: [Bool]
    /// The expectations by their frame's type and IDs as bytes: one hash lookup per sighting
    /// instead of a text comparison per expectation (most of the monitor's time at 500 adverts/s).
    private let byFrame: [[UInt8]: [Int]]
    /// The expectations each advertising payload matched, by the payload's bytes: a beacon sends
    /// the same bytes every 100 ms, so most reports are one hash of ~30 bytes instead of a decode
    /// (payloads with a TLM frame, which changes every time, are not kept). Bounded: emptied
    /// when full, as a street full of phones with rotating payloads would fill it.
    private var payloads: [[UInt8]: [Int]] = [:]
    static let payloadCacheLimit = 512
    /// The sender each state's `address` was formatted from (no formatting per advert).
    private var addressBytes: [[UInt8]?]

    public init(expectations: [Expectation], silentAfterMs: Int64, startMs: Int64) {
        self.expectations = expectations
        self.silentAfterMs = max(1, silentAfterMs)
        self.startMs = startMs
        states = expectations.map { BeaconState(name: $0.name) }
        windows = Array(repeating: RSSIWindow(), count: expectations.count)
        neverHeardReported = Array(repeating: false, count: expectations.count)
        addressBytes = Array(repeating: nil, count: expectations.count)
        var index: [[UInt8]: [Int]] = [:]
        for (i, e) in expectations.enumerated() where !e.fields.isEmpty {
            index[Self.frameKey(type: e.type, ids: e.fields), default: []].append(i)
        }
        byFrame = index
    }

    /// The tracker of an edited monitor.toml (issue 38): `expectations` as they now are; what
    /// was known of each beacon that is still expected (the same frame, whatever its name now)
    /// is kept, heard or silent as before; a new one is given `silentAfterMs` from `nowMs` to be
    /// heard, as at a start; the advert count goes on. Silence is judged with the new
    /// `silentAfterMs` from the next `tick`.
    public func reconfigured(expectations new: [Expectation], silentAfterMs: Int64, now nowMs: Int64) -> BeaconTracker {
        var t = BeaconTracker(expectations: new, silentAfterMs: silentAfterMs, startMs: nowMs)
        t.advertsTotal = advertsTotal
        for (i, e) in new.enumerated() {
            guard let j = expectations.firstIndex(where: { $0.sameFrame(as: e) }) else { continue }
            t.states[i] = states[j]
            t.states[i].name = e.name
            t.windows[i] = windows[j]
            t.neverHeardReported[i] = neverHeardReported[j]
            t.addressBytes[i] = addressBytes[j]
        }
        return t
    }

    /// Type, then each identifying field's key and value, NUL-separated (none holds a NUL).
    static func frameKey(type: String, ids: [FrameField]) -> [UInt8] {
        var key = Array(type.utf8)
        for f in ids {
            key.append(0); key += f.key.utf8
            key.append(0); key += f.value.utf8
        }
        return key
    }

    public mutating func countAdvert() { advertsTotal &+= 1 }

    /// Records a sighting. One of an expected frame marks it heard (an event when it was not);
    /// a frame carrying telemetry (Eddystone-TLM) goes to every expected beacon whose last
    /// address is its sender (it does not count as hearing the expected frame). Other sightings
    /// change nothing.
    public mutating func record(_ s: Sighting, wallSeconds: Int64) -> [TrackerEvent] {
        if let frame = s.frame as? any TelemetryFrame {
            guard let t = frame.received else { return [] }
            return recordTLM(TLMReading(t), from: s.address)
        }
        return matched(expectationsMatching(s), rssi: s.rssi, atMs: s.atMs, wallSeconds: wallSeconds, senderBytes: nil, sender: s.address)
    }

    /// Counts one advertising report and records every frame in it (as `countAdvert` and
    /// `record(_:wallSeconds:)` for each of `Sighting.all(in:atMs:)`), through the payload cache.
    public mutating func record(_ r: AdvertisingReport, atMs: Int64, wallSeconds: Int64) -> [TrackerEvent] {
        countAdvert()
        let matches: [Int]
        var events: [TrackerEvent] = []
        if let known = payloads[r.data] {
            matches = known
        } else {
            var found: [Int] = [], changing = false
            for s in Sighting.all(in: r, atMs: atMs) {
                if s.frame.isRefreshedOnAir {
                    changing = true
                    events += record(s, wallSeconds: wallSeconds)
                } else {
                    found += expectationsMatching(s)
                }
            }
            if !changing {
                if payloads.count >= Self.payloadCacheLimit { payloads.removeAll(keepingCapacity: true) }
                payloads[r.data] = found
            }
            matches = found
        }
        guard !matches.isEmpty else { return events }
        return events + matched(matches, rssi: r.rssi, atMs: atMs, wallSeconds: wallSeconds, senderBytes: r.address, sender: r.addressString)
    }

    /// The expectations a (non-TLM) sighting is of.
    private func expectationsMatching(_ s: Sighting) -> [Int] {
        let ids = s.identifyingFields
        guard !ids.isEmpty else { return [] }
        return byFrame[Self.frameKey(type: s.type, ids: ids)] ?? []
    }

    /// Marks `indices` heard by one sighting from `sender`, formatted only when a state's address
    /// was not made from the same `senderBytes` (nil: the bytes are not known, always taken).
    private mutating func matched(_ indices: [Int], rssi: Int8, atMs: Int64, wallSeconds: Int64,
                                  senderBytes: [UInt8]?, sender: @autoclosure () -> String) -> [TrackerEvent] {
        var events: [TrackerEvent] = []
        for i in indices {
            var st = states[i]
            st.adverts &+= 1
            st.lastSeenMs = atMs
            st.lastSeenWall = wallSeconds
            if senderBytes == nil || addressBytes[i] != senderBytes {
                st.address = sender()
                addressBytes[i] = senderBytes
            }
            windows[i].add(Int(rssi))
            st.rssi = windows[i].trimmedMean
            if !st.heard {
                events.append(.heard(name: st.name, first: !st.everHeard))
                st.heard = true
                st.everHeard = true
            }
            states[i] = st
        }
        return events
    }

    private mutating func recordTLM(_ r: TLMReading, from address: String) -> [TrackerEvent] {
        var events: [TrackerEvent] = []
        for i in states.indices where states[i].address.map({ sameKey($0, address) }) == true {
            if let old = states[i].tlm, r.uptimeS < old.uptimeS {
                states[i].reboots &+= 1
                events.append(.rebooted(name: states[i].name, uptimeS: r.uptimeS))
            }
            states[i].tlm = r
        }
        return events
    }

    /// Beacons unheard for `silentAfterMs` go silent (their RSSI is forgotten); a beacon never
    /// heard is reported silent once, `silentAfterMs` after `startMs`.
    public mutating func tick(now nowMs: Int64) -> [TrackerEvent] {
        var events: [TrackerEvent] = []
        for i in states.indices {
            if states[i].heard, let last = states[i].lastSeenMs, reached(nowMs, last) {
                states[i].heard = false
                states[i].rssi = nil
                windows[i].removeAll()
                events.append(.silent(name: states[i].name, lastSeenWall: states[i].lastSeenWall))
            } else if !states[i].everHeard, !neverHeardReported[i], reached(nowMs, startMs) {
                neverHeardReported[i] = true
                events.append(.silent(name: states[i].name, lastSeenWall: nil))
            }
        }
        return events
    }

    /// When `tick` next has something to do; nil when nothing is pending.
    public var nextDeadlineMs: Int64? {
        var next: Int64?
        for i in states.indices {
            let d: Int64?
            if states[i].heard, let last = states[i].lastSeenMs {
                d = deadline(after: last)
            } else if !states[i].everHeard, !neverHeardReported[i] {
                d = deadline(after: startMs)
            } else {
                d = nil
            }
            if let d, next.map({ d < $0 }) ?? true { next = d }
        }
        return next
    }

    /// `silentAfterMs` after `ms`, saturating (no trap whatever the clock says).
    private func deadline(after ms: Int64) -> Int64 {
        let (d, overflow) = ms.addingReportingOverflow(silentAfterMs)
        return overflow ? .max : d
    }

    private func reached(_ nowMs: Int64, _ since: Int64) -> Bool { nowMs >= deadline(after: since) }

    /// Every expected beacon heard now.
    public var allHeard: Bool { states.allSatisfy(\.heard) }
}
