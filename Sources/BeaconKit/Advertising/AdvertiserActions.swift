/// What the advertiser reports to whoever runs the beacon on its adapter (the adapter session).
public enum AdvertiserEvent: Equatable, Sendable {
    /// The outcome of `arm` for config generation `generation`.
    case armed(generation: Int, Result<AirSummary, ArmFailure>)
    case probed(ArmFailure?)
    case rotated(ArmFailure?)
    case payloadsRefreshed(ArmFailure?)
    /// `takeDown` ended: `confirmed` when the controller answered every command in time.
    case tookDown(confirmed: Bool)
    /// The adapter is up, before our commands: what the kernel sent to initialise it (a Reset
    /// among them) is not interference.
    case broughtUp
    case hardwareError(UInt8)
    /// A central connected to our connectable advertising (handle), or its link ended.
    case centralConnected(UInt16)
    case centralDisconnected(UInt16)
    /// A central's link (address) is about to be cut by us: what serves it lets go first.
    case releasingCentral([UInt8])
}

/// What the advertiser asks of its runner, in order.
public enum AdvertiserAction {
    /// Open the adapter's command channel; answer `channelOpened`.
    case openChannel
    case closeChannel
    /// Forget every command queued or in flight: a newer sequence goes to the kernel now.
    case abandonCommands
    /// HCIDEVUP / HCIDEVDOWN, off the loop; answer `powered` (one at a time: a change already
    /// running answers for this one).
    case power(up: Bool)
    /// Send on the channel; answer `replied`.
    case send(any HCICommand, timeoutMs: Int64)
    /// Ask the kernel to end the link to `address` (see `ControllerAccess.disconnect`).
    case disconnect(address: [UInt8], random: Bool)
    /// `takeDown`'s deadline: answer `deadlinePassed` unless the channel is closed first.
    case startDeadline(ms: Int64)
    case log(LogLevel, String)
    case event(AdvertiserEvent)
}
