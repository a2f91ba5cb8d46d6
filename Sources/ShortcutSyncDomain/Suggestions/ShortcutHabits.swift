import Foundation

/// What the service knows of when one shortcut (or one donation group of it) is used: its
/// sums per device. Exact, like `HabitSums`.
public struct ShortcutHabits: Sendable, Hashable {
    public private(set) var byDevice: [UUID: HabitSums]

    public init(byDevice: [UUID: HabitSums] = [:]) {
        self.byDevice = byDevice.filter { !$0.value.isEmpty }
    }

    /// Sums known to hold no empty device (read back from their bytes): kept as they are.
    init(nonEmpty byDevice: [UUID: HabitSums]) {
        self.byDevice = byDevice
    }

    public var isEmpty: Bool { byDevice.isEmpty }

    public mutating func add(_ donation: HabitDonation) {
        byDevice[donation.deviceId, default: HabitSums()].add(donation)
    }

    public mutating func remove(_ donation: HabitDonation) {
        byDevice[donation.deviceId]?.remove(donation)
        if byDevice[donation.deviceId]?.isEmpty == true { byDevice[donation.deviceId] = nil }
    }

    /// Forgets what `device` taught (it was signed out).
    public mutating func drop(_ device: UUID) {
        byDevice[device] = nil
    }

    /// Forgets what a forget of `scope`, newer than every donation summed here, takes: what the
    /// device taught, where anything was done at the place, or everything.
    public mutating func forget(_ scope: LearningScope) {
        switch scope {
        case .device(let device): drop(device)
        case .place(let slot):
            for device in byDevice.keys { byDevice[device]?.dropPlace(slot) }
        case .account, .shortcut: byDevice = [:]
        }
    }

    /// Adds another part's sums device by device, or takes them back (`subtracting`).
    public mutating func add(_ other: ShortcutHabits, subtracting: Bool = false) {
        for (device, sums) in other.byDevice {
            byDevice[device, default: HabitSums()].add(sums, subtracting: subtracting)
            if byDevice[device]?.isEmpty == true { byDevice[device] = nil }
        }
    }
}
