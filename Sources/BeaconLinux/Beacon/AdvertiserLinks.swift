import BeaconKit

/// The links of centrals connected to our connectable advertising (the GATT identity), as the
/// advertiser's HCI socket reports them, and their end through the kernel.
extension Advertiser {
    /// Events other than command completions: hardware errors and the GATT identity's links.
    func received(_ e: HCIEvent) {
        switch e {
        case .hardwareError(let code): onHardwareError?(code)
        case .leConnectionComplete(.success, let h, true, let peer, let random):
            links[h] = (peer, random)
            // The controller ended the connectable set (legacy: all advertising) at the connection;
            // the policy re-arms without it. On a later turn: never inside the channel's read.
            loop.post { [weak self] in self?.onCentralConnected?(h) }
        case .disconnectionComplete(.success, let h, _):
            links[h] = nil
            loop.post { [weak self] in self?.onDisconnected?(h) }
        default: break
        }
    }

    /// Asks the kernel to end a central's connection; `done(true)` when the link is not known
    /// (already gone), so the caller forgets it. Disconnection Complete follows otherwise.
    public func disconnect(handle: UInt16, _ done: @escaping (_ gone: Bool) -> Void) {
        guard let link = links[handle] else { return loop.post { done(true) } }
        beforeDisconnect?(link.address)
        do throws(Errno) {
            try controller.disconnect(address: link.address, random: link.random)
        } catch {
            log.warning("hci\(index): could not ask the kernel to disconnect handle \(handle): \(error)")
        }
        loop.post { done(false) }
    }
}
