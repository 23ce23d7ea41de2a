/// Which scan commands the controller took.
public enum ScanFamily: String, Sendable {
    case legacy, extended
}
