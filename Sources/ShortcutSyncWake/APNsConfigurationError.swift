/// An APNs configuration that cannot work, said so that an operator knows which option to fix.
public struct APNsConfigurationError: Error, CustomStringConvertible, Sendable {
    public let description: String
}
