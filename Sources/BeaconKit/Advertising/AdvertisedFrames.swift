/// The configured frames and how they are sent, as of the last arm: each frame's bytes (a frame
/// refreshed on air with its telemetry counted now), its PDU and scan response, the interval
/// asked for and the one a controller forced, the TX power, and the address sent from. Builds a
/// step's HCI command when it runs and says how a refused interval or random address is worked
/// around; what the controller holds is the caller's (`AdvertisingState`).
struct AdvertisedFrames {
    var configured: [ConfiguredFrame] = []
    /// The board's uptime and temperature for the TLM frame, as the runner last read them; nil: none yet.
    var board: BoardReading?
    /// PDUs scheduled while each slot was enabled: what the TLM frame counts.
    var counter = AdvertisingCounter()
    var wantedIntervalMs: UInt16 = 0
    /// The interval in use (a Bluetooth 4.x controller may have forced 100 ms).
    var effectiveIntervalMs: UInt16 = 0
    var txPowerDbm: Int8?
    /// The static random address to send from (the address repair's), as of the last bring-up.
    var randomAddress: BluetoothAddress?
    /// What the frames are sent from, chosen at each arm.
    var ownAddress: OwnAddressType = .public
    /// The arm in progress only left out frames at the end: extended sets stay extended.
    var keepsFamily = false
    /// Warnings said once per process.
    var warnedTxPower = false
    var warnedRandomAddress = false

    /// Takes `config`'s frames; true when they are the ones already configured. The GATT identity
    /// left out while a central is connected keeps the frames on the kind of advertising they are
    /// on (an edit to fewer frames goes back to legacy commands).
    mutating func take(_ config: BeaconConfig, randomAddress: BluetoothAddress?) -> (sameFrames: Bool, before: [String]) {
        let airFrames = config.airFrames()
        let before = configured.map(\.name), after = airFrames.map(\.name)
        keepsFamily = before == after + [GATTIdentity.name]
        configured = airFrames
        wantedIntervalMs = config.bluetooth.intervalMs
        self.randomAddress = randomAddress
        return (before == after, before)
    }

    /// True when frame `f` goes on air connectable (ADV_IND: the GATT identity).
    func isConnectable(frame f: Int) -> Bool { f < configured.count && configured[f].frame.isConnectable }

    /// The PDU frame `f` goes out as: ADV_SCAN_IND with the beacon's name (`ConfiguredFrame.pdu`).
    func pdu(ofFrame f: Int) -> LegacyPDU { f < configured.count ? configured[f].pdu : .nonConnectable }

    /// Frame `f`'s bytes as they go on air now (a TLM frame with fresh telemetry).
    func payload(ofFrame f: Int, now: Int64) -> [UInt8] {
        let frame = configured[f].frame
        guard frame.isRefreshedOnAir else { return frame.advertisingData(.zero) }
        let count = counter.count(at: now)
        return frame.advertisingData(board?.telemetry(advertisingCount: count, now: now)
                                     ?? Telemetry(uptimeDeciseconds: 0, advertisingCount: count, temperature: nil))
    }

    /// The slots of `plan` that carry one frame refreshed on air, always the same one (not in turn).
    func standingRefreshedSlots(_ plan: AirPlan?) -> [Int] {
        guard let plan else { return [] }
        return (0..<plan.slotCount).filter { s in
            let r = plan.frames(inSlot: s)
            return r.count == 1 && configured[r.lowerBound].frame.isRefreshedOnAir
        }
    }

    /// True when `config` (or, without one, what is configured now) has a frame that carries telemetry.
    func wantsBoardReading(for config: BeaconConfig?) -> Bool {
        if let config { return config.airFrames().contains { $0.frame.carriesTelemetry } }
        return configured.contains { $0.frame.carriesTelemetry }
    }

    /// Takes `config`'s TX power; true when only sets can send it (`info` has them). Where the
    /// controller has none, the power is ignored, said once (the warning returned).
    mutating func takeTxPower(_ config: BeaconConfig, _ info: ControllerInfo) -> (needsSets: Bool, warning: String?) {
        txPowerDbm = config.bluetooth.txPowerDbm
        guard txPowerDbm != nil else { return (false, nil) }
        if info.hasExtendedAdvertising { return (true, nil) }
        guard !warnedTxPower else { return (false, nil) }
        warnedTxPower = true
        return (false, "tx_power_dbm is ignored: \(config.bluetooth.adapter) has no LE extended advertising (\(info.versionName))")
    }

    /// The static random address this arm sends from (nil: the public one), noted in `ownAddress`.
    mutating func chooseOwnAddress() -> BluetoothAddress? {
        ownAddress = randomAddress == nil ? .public : .random
        return randomAddress
    }

    /// Step command `c` as it goes out now, at `intervalMs` where it sets parameters as configured.
    func build(_ c: CommandSteps.Command, intervalMs: UInt16, controller: AdvertisingState, now: Int64) -> any HCICommand {
        switch c {
        case .fixed(let command): return command
        case .parameters(let h, let f, let configured):
            let ms = configured ? intervalMs : effectiveIntervalMs
            let pdu = pdu(ofFrame: f)
            return h.map { LESetExtendedAdvertisingParameters(handle: $0, intervalMs: ms, txPowerDbm: txPowerDbm, pdu: pdu, ownAddress: ownAddress) }
                ?? LESetAdvertisingParameters(intervalMs: ms, pdu: pdu, ownAddress: ownAddress)
        case .legacyRandomAddress(let address): return LESetRandomAddress(address)
        case .data(let h, let f): return Self.data(payload(ofFrame: f, now: now), h)
        case .scanResponse(let h, let f): return Self.scanResponse(configured[f].scanResponse, h)
        case .slotData(let h): return Self.data(controller.slot(h)?.data ?? [], h)
        case .slotScanResponse(let h): return Self.scanResponse(controller.slot(h)?.scanResponse ?? [], h)
        case .enable(let h): return h.map { LESetExtendedAdvertisingEnable(true, handle: $0) } ?? LESetAdvertiseEnable(true)
        case .disable(let h): return h.map { LESetExtendedAdvertisingEnable(false, handle: $0) } ?? LESetAdvertiseEnable(false)
        }
    }

    private static func data(_ d: [UInt8], _ h: UInt8?) -> any HCICommand {
        h.map { LESetExtendedAdvertisingData(handle: $0, data: d) } ?? LESetAdvertisingData(data: d)
    }

    private static func scanResponse(_ d: [UInt8], _ h: UInt8?) -> any HCICommand {
        h.map { LESetExtendedScanResponseData(handle: $0, data: d) } ?? LESetScanResponseData(data: d)
    }

    /// How a refusal with status `st` of `r` (on `adapter`) is worked around, if it is one of
    /// those: the step sent again at another interval, or skipped (with what to say, once).
    enum Workaround {
        case resend(CommandSteps.Running, warning: String?)
        case skip(warning: String?)
    }

    mutating func workaround(_ r: CommandSteps.Running, refused st: HCIStatus, adapter: String) -> Workaround? {
        switch r.command {
        case .parameters(_, _, configured: true)
            // ADV_SCAN_IND too: the same minimum applies to scannable undirected advertising.
            where wantedIntervalMs < AdvertisingInterval.legacyNonConnectableMinimumMs && r.intervalMs == wantedIntervalMs
                && [.invalidParameters, .unsupportedFeature, HCIStatus(rawValue: 0x1e), HCIStatus(rawValue: 0x20)].contains(st):
            // Bluetooth 4.x controllers refuse non-connectable intervals under 100 ms.
            let fallback = AdvertisingInterval.legacyNonConnectableMinimumMs
            let warning = effectiveIntervalMs == fallback ? nil
                : "\(adapter) refused a \(wantedIntervalMs) ms interval (\(st)); advertising every \(fallback) ms instead"
            effectiveIntervalMs = fallback
            var again = r
            again.intervalMs = fallback
            return .resend(again, warning: warning)
        case .legacyRandomAddress(let address):
            // Refused while the controller scans or initiates for another program: the frames
            // go out from the public address rather than not at all; each arm asks again.
            ownAddress = .public
            guard !warnedRandomAddress else { return .skip(warning: nil) }
            warnedRandomAddress = true
            return .skip(warning: "\(adapter) refused its static random address \(address) (\(st)): it is scanning or connecting for another program; advertising from its public address until it allows it")
        default:
            return nil
        }
    }
}
