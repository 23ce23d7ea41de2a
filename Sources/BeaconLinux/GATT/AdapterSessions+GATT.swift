/// The sessions hear the GATT identity's server change: the status names the server.
extension AdapterSessions: GATTIdentityServiceDelegate {
    public func gattIdentityServerChanged(_ service: GATTIdentityService) { publishStatus() }
}
