import Foundation
import ShortcutSyncDomain

/// Random pushes of several accounts and devices, with few identifiers, groups and phrases so
/// that deletions cover donations, phrases collide and devices switch to views of their own; and
/// now and then the suggestions' learning of the account, of one of its devices or of one
/// shortcut forgotten, paused or resumed.
public struct Scenario {
    private var random: SeededGenerator
    public var devices: [DeviceScript]
    public var voiceIds: [UUID: [UUID]] = [:]
    private var wall: Int64 = 1_763_712_000_000

    static let bundles = ["com.example.soup", "com.example.tea", "com.example.maps"]

    public init(seed: UInt64, accounts: Int, devicesPerAccount: Int) {
        // Every id comes from the seed too, so that a seed reproduces a history exactly.
        var random = SeededGenerator(seed: seed)
        devices = (0..<accounts).flatMap { _ in
            let account = random.uuid()
            return (0..<devicesPerAccount).map { _ in DeviceScript(random.uuid(), account: account, detail: .full) }
        }
        for account in devices.map(\.account) where voiceIds[account] == nil {
            voiceIds[account] = (0..<4).map { _ in random.uuid() }
        }
        self.random = random
    }

    /// One push: a device and a few of its events.
    public mutating func push(maxEvents: Int = 6) -> (device: DeviceScript, events: [AcceptedEvent]) {
        let index = Int.random(in: devices.indices, using: &random)
        var device = devices[index]
        let count = Int.random(in: 1...maxEvents, using: &random)
        var events: [AcceptedEvent] = []
        for _ in 0..<count {
            // Clocks go back and forth a little, as offline devices' do.
            wall += Int64.random(in: -3...5, using: &random)
            events.append(randomEvent(&device))
        }
        devices[index] = device
        return (device, events)
    }

    private mutating func randomEvent(_ device: inout DeviceScript) -> AcceptedEvent {
        let bundle = Self.bundles.randomElement(using: &random)!
        let identifier = "item-\(Int.random(in: 0..<5, using: &random))"
        let voice = voiceIds[device.account]!.randomElement(using: &random)!
        let phrase = ["Order soup", "order  soup!", "Tea time", "Go home", "ＯＲＤＥＲ ＳＯＵＰ"].randomElement(using: &random)!
        switch Int.random(in: 0..<24, using: &random) {
        case 0..<9:
            let group = Bool.random(using: &random) ? "group-\(Int.random(in: 0..<2, using: &random))" : nil
            return device.donate(identifier, bundle: bundle, group: group, at: wall)
        case 9:
            return device.delete(.identifiers([identifier, "item-\(Int.random(in: 0..<5, using: &random))"]), bundle: bundle, at: wall)
        case 10:
            return device.delete(.groupIdentifier("group-\(Int.random(in: 0..<2, using: &random))"), bundle: bundle, at: wall)
        case 11:
            return device.delete(.all, bundle: bundle, at: wall)
        case 12..<15:
            return device.addVoice(voice, phrase: phrase, to: identifier, bundle: bundle, at: wall)
        case 15, 16:
            return device.updateVoice(voice, phrase: phrase, at: wall)
        case 17:
            return device.deleteVoice(voice, at: wall)
        case 22:
            // Mostly one shortcut: a forget of the account or a device wipes much of what was learned.
            let scope: LearningScope = switch Int.random(in: 0..<6, using: &random) {
            case 0: .account
            case 1: .device(devices.filter { $0.account == device.account }.randomElement(using: &random)!.deviceId)
            default: .shortcut(ShortcutID(bundleId: bundle, identifier: identifier))
            }
            return device.forget(scope, at: wall)
        case 23:
            let scope: LearningScope = Int.random(in: 0..<4, using: &random) == 0
                ? .account : .device(devices.filter { $0.account == device.account }.randomElement(using: &random)!.deviceId)
            return device.pause(scope, Bool.random(using: &random), at: wall)
        default:
            let installed = Self.bundles.filter { _ in Bool.random(using: &random) }
            return device.report(installed, at: wall)
        }
    }
}
