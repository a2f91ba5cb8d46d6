import Foundation

/// How the people of a `SyntheticPopulation` live (issue 34: the model must fit people in
/// general, not its own generator): how strong their routines are, how much they use shortcuts
/// off any routine, how many shortcuts follow no routine at all, how many devices they have, and
/// how often they travel across time zones. `standard` is the population `bench suggestions`
/// has always replayed, drawn the same way from the same seed.
public struct PopulationShape: Sendable, Hashable, Codable {
    public var name: String
    /// The probability that a routine's hour sees a donation.
    public var routineStrength: ClosedRange<Double> = 0.3...0.95
    /// Donations per waking hour off any routine, per device.
    public var noise: ClosedRange<Double> = 0.002...0.012
    /// Routines per phase of a shortcut: a shortcut with none is used irregularly.
    public var routines: ClosedRange<Int> = 0...2
    public var devices: ClosedRange<Int> = 2...4
    public var trips: ClosedRange<Int> = 0...2
    /// Shortcuts each person uses (over the weeks).
    public var shortcuts: ClosedRange<Int> = 12...30
    /// Whether people go between places (home, work, gym, a bank they pass on Fridays, and
    /// elsewhere) and each routine is done at one of them (`SyntheticPopulation.Places`).
    public var places = false
    /// The chance that a device other than the person's first holds no place key: its donations
    /// carry no place and its requests name none.
    public var keyless = 0.0

    public init(name: String) {
        self.name = name
    }

    public static let standard = PopulationShape(name: "standard")

    /// Populations with place routines (issue 67), each also scored without places.
    public static let placed: [PopulationShape] = [
        { var shape = PopulationShape(name: "places"); shape.places = true; shape.keyless = 0.25; return shape }(),
        { var shape = PopulationShape(name: "places, noisy travellers"); shape.places = true; shape.keyless = 0.25
          shape.noise = 0.01...0.04; shape.trips = 3...6; return shape }(),
        { var shape = PopulationShape(name: "places, half the devices without the key"); shape.places = true; shape.keyless = 0.5; return shape }(),
        { var shape = PopulationShape(name: "places, few shortcuts, strong routines"); shape.places = true; shape.keyless = 0.25
          shape.shortcuts = 4...10; shape.routineStrength = 0.7...0.98; shape.routines = 1...2; return shape }(),
    ]

    /// The standard population and one of each kind of difference from it.
    public static let all: [PopulationShape] = [
        standard,
        { var shape = PopulationShape(name: "weak routines"); shape.routineStrength = 0.1...0.45; return shape }(),
        { var shape = PopulationShape(name: "noisy"); shape.noise = 0.01...0.04; return shape }(),
        { var shape = PopulationShape(name: "mostly irregular"); shape.routines = 0...1; shape.noise = 0.004...0.02; return shape }(),
        { var shape = PopulationShape(name: "one or two devices"); shape.devices = 1...2; return shape }(),
        { var shape = PopulationShape(name: "four devices"); shape.devices = 4...4; return shape }(),
        { var shape = PopulationShape(name: "travellers"); shape.trips = 3...6; return shape }(),
        { var shape = PopulationShape(name: "few shortcuts"); shape.shortcuts = 4...10; return shape }(),
        { var shape = PopulationShape(name: "few shortcuts, strong routines"); shape.shortcuts = 4...10; shape.routineStrength = 0.7...0.98; shape.routines = 1...2; return shape }(),
        {
            var shape = PopulationShape(name: "all of these at once")
            shape.routineStrength = 0.1...0.45
            shape.noise = 0.01...0.04
            shape.routines = 0...1
            shape.devices = 3...4
            shape.trips = 3...6
            return shape
        }(),
    ]
}
