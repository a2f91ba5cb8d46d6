import Foundation

/// What the service knows of when one shortcut is used: its decayed sums per device.
public struct ShortcutHabits: Sendable, Hashable {
    public var byDevice: [UUID: HabitSums]

    public init(byDevice: [UUID: HabitSums] = [:]) {
        self.byDevice = byDevice.filter { !$0.value.isEmpty }
    }

    public mutating func add(_ donation: HabitDonation) {
        byDevice[donation.deviceId, default: HabitSums()].add(donation)
    }

    public mutating func remove(_ donation: HabitDonation) {
        byDevice[donation.deviceId]?.remove(donation)
        if byDevice[donation.deviceId]?.isEmpty == true { byDevice[donation.deviceId] = nil }
    }

    /// Adds (or with `sign` −1 takes back) another part's sums, device by device.
    public mutating func add(_ other: ShortcutHabits, sign: Int = 1) {
        for (device, sums) in other.byDevice {
            byDevice[device, default: HabitSums()].add(sums, sign: sign)
            if byDevice[device]?.isEmpty == true { byDevice[device] = nil }
        }
    }

    public var isEmpty: Bool { byDevice.isEmpty }

    /// Every device's sums together.
    public var combined: HabitSums {
        var all = HabitSums()
        for device in byDevice.keys.sorted(by: { $0.isOrdered(before: $1) }) { all.add(byDevice[device]!) }
        return all
    }

    /// Equal up to the rounding of sums (`HabitSums.isClose`).
    public func isClose(to other: ShortcutHabits) -> Bool {
        guard Set(byDevice.keys) == Set(other.byDevice.keys) else { return false }
        return byDevice.allSatisfy { device, sums in other.byDevice[device].map(sums.isClose) ?? false }
    }
}
