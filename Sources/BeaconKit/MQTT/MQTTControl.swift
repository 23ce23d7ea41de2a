/// `[mqtt] control`: which topics the monitor takes changes from (and, for firmware updates,
/// whose Install it takes: `beacon` Home Assistant's, `fleet` the release topic's too).
public enum MQTTControl: String, CaseIterable, Sendable {
    /// No subscription; the control entities' discovery is cleared.
    case off
    /// `altbeacond/<node>/beacon/set/<name>`: this beacon's own topics.
    case beacon
    /// Also `altbeacond/all/beacon/set/<name>`, every setting but the identity.
    case fleet
}
