import APNsStandIn
import Foundation
import Logging
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import ShortcutSyncAPI
import ShortcutSyncClient
import ShortcutSyncDomain
import ShortcutSyncApp
import ShortcutSyncServer
import ShortcutSyncStore
import ShortcutSyncWake

/// `shortcut-sync demo`: the service and three devices of one person, each built on
/// `ShortcutSyncClient`, that donate, assign phrases (two collide), go offline, delete, come back
/// and sync; then the iPad sleeps and is woken by a background notification (through a local
/// APNs stand-in, DESIGN §6). It prints every device's view after each step and ends by comparing them.
public struct Demo: Sendable {
    public let database: DatabaseURL
    public let logger: Logger
    /// Where the devices keep their SQLite files.
    public let storage: URL
    let write: @Sendable (String) -> Void

    /// `write` is given what the demo prints with its control characters escaped but its line
    /// breaks: the views it prints are the service's, which a terminal must not take for commands.
    public init(database: DatabaseURL, storage: URL, logger: Logger, write: @escaping @Sendable (String) -> Void) {
        self.database = database
        self.storage = storage
        self.logger = logger
        self.write = { write(ControlCharacters.escaped($0, keepingLineBreaks: true)) }
    }

    struct Device {
        let name: String
        let client: ShortcutSyncClient
    }

    /// Runs the story; true when every device ends with the same view.
    public func run() async throws -> Bool {
        let adminToken = "demo-" + UUID().uuidString
        // Apple cannot be reached from here: the service wakes devices through a stand-in for
        // APNs, trusted as `--apns-url` and `--apns-ca-file` would make it, with the default
        // wake delay (3 s after a change) and interval.
        return try await APNsStandIn.withStandIn(logger: logger) { standIn in
            var configuration = ServeConfiguration(
                server: ServerConfiguration(host: "127.0.0.1", port: 0, adminToken: adminToken, maximumConnections: 10, keepAliveInterval: .seconds(1)),
                database: database)
            configuration.apns = APNsConfiguration(keyPEM: standIn.key.privateKeyPEM, keyID: standIn.key.keyID, teamID: standIn.key.teamID,
                                                   topics: ["com.example.soup"], url: standIn.url, additionalTrustRootsPEM: standIn.authorityPEM)
            return try await withRunningService(configuration, logger: logger) { running in
                try await story(running.baseURL, adminToken: adminToken, standIn: standIn)
            }
        }
    }

    private func story(_ server: URL, adminToken: String, standIn: APNsStandIn) async throws -> Bool {
        let http = AsyncHTTPClientTransport()
        let admin = Client(serverURL: server, transport: http, middlewares: [BearerToken(token: adminToken)])
        let account = try await admin.createAccount().created.body.json
        write("ShortcutSync demo: one person (account \(account.accountId.lowercased())), three devices, service on \(server.absoluteString)\n")
        let accountClient = Client(serverURL: server, transport: http, middlewares: [BearerToken(token: account.accountToken)])
        var devices: [Device] = []
        for (name, platform) in [("iPhone", Components.Schemas.Platform.iOS), ("iPad", .iPadOS), ("Mac", .macOS)] {
            let created = try await accountClient.createDevice(body: .json(.init(name: name, platform: platform))).created.body.json
            var settings = ShortcutSyncClient.Configuration(bundleId: "com.example.soup",
                                                            storagePath: storage.appendingPathComponent("\(name).sqlite").path)
            settings.initialBackoff = .milliseconds(50)
            let transport = OpenAPISyncTransport(serverURL: server, deviceToken: created.deviceToken, transport: http)
            devices.append(Device(name: name, client: try ShortcutSyncClient(configuration: settings, transport: transport, logger: logger)))
        }
        let (phone, pad, mac) = (devices[0].client, devices[1].client, devices[2].client)

        try await step(1, "Every device online. The iPhone donates two soups; the Mac orders a soup too.", devices) {
            try await phone.donate(IntentDonation(intentType: "OrderSoupIntent", identifier: "tomato", title: "Tomato soup", groupIdentifier: "soups"))
            try await phone.donate(IntentDonation(intentType: "OrderSoupIntent", identifier: "leek", title: "Leek soup", groupIdentifier: "soups"))
            try await mac.donate(UserActivityDonation(activityType: "com.example.soup.order", persistentIdentifier: "pumpkin", title: "Pumpkin soup"))
        }
        let tomato = try await shortcut("tomato", on: phone)
        let leek = try await shortcut("leek", on: phone)
        try await step(2, "Phrases: the iPhone says \"Soup time\" for tomato, the Mac \"soup time!\" for leek: they collide.", devices) {
            try await phone.addVoiceShortcut(phrase: "Soup time", for: tomato)
            try await Task.sleep(for: .milliseconds(5))
            try await mac.addVoiceShortcut(phrase: "soup time!", for: leek)
        }
        try await step(3, "The iPad goes offline and deletes tomato; meanwhile the iPhone orders leek again and the Mac renames its phrase.",
                       devices, offline: ["iPad"]) {
            try await pad.deleteDonations(withIdentifiers: ["tomato"])
            try await phone.donate(IntentDonation(intentType: "OrderSoupIntent", identifier: "leek", title: "Leek soup, large", groupIdentifier: "soups"))
            if let conflicting = await mac.voiceShortcuts().first(where: { $0.status == .phraseConflict }) {
                try await mac.updateVoiceShortcut(conflicting.voiceShortcutId, phrase: "Leek please")
            }
        }
        try await step(4, "The iPad comes back and syncs: its deletion reaches everyone.", devices) {}
        try await step(5, "The iPhone orders tomato again, after the deletion: it is back everywhere.", devices) {
            try await phone.donate(IntentDonation(intentType: "OrderSoupIntent", identifier: "tomato", title: "Tomato soup", groupIdentifier: "soups"))
        }

        try await wake(pad: pad, phone: phone, devices: devices, standIn: standIn, pumpkin: try await shortcut("pumpkin", on: phone))

        var views: [(String, DeviceView)] = []
        for device in devices { views.append((device.name, await device.client.currentView)) }
        let differing = views.filter { $0.1 != views[0].1 }.map(\.0)
        if differing.isEmpty {
            write("All three devices show the same \(views[0].1.shortcuts.count) shortcuts and \(views[0].1.voiceShortcuts.count) voice shortcuts: converged.\n")
            return true
        }
        write("The views differ: \(differing.joined(separator: ", ")) disagree with the iPhone.\n")
        return false
    }

    /// Runs `actions`, then syncs every online device twice (their pushes first, then what the
    /// others pushed), and prints the views.
    private func step(_ number: Int, _ title: String, _ devices: [Device], offline: Set<String> = [],
                      _ actions: () async throws -> Void) async throws {
        write("\n\(number). \(title)\n")
        try await actions()
        let online = devices.filter { !offline.contains($0.name) }
        for _ in 0..<2 {
            for device in online { try await device.client.sync() }
        }
        for device in devices {
            let view = await device.client.currentView
            let pending = try await device.client.pendingCount()
            write(Self.line(device.name, view, note: offline.contains(device.name) ? "offline, \(pending) waiting" : ""))
        }
    }

    /// Step 6: the iPad registers its push token and sleeps (no stream, no sync); the iPhone names
    /// pumpkin; the service wakes the iPad through the stand-in, and the iPad's app, as in
    /// `didReceiveRemoteNotification`, pulls and shows the phrase. One line says how long it took.
    private func wake(pad: ShortcutSyncClient, phone: ShortcutSyncClient, devices: [Device], standIn: APNsStandIn,
                      pumpkin: ShortcutView) async throws {
        write("\n6. The iPad sleeps (no stream); the iPhone says \"Pumpkin please\" for pumpkin; the service wakes the iPad.\n")
        let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        try await pad.registerPushToken(hex: token, topic: "com.example.soup", environment: .development)
        _ = try await phone.addVoiceShortcut(phrase: "Pumpkin please", for: pumpkin)
        try await phone.sync()
        let changed = ContinuousClock.now
        let wakes = try await standIn.waitForRequests(1, within: .seconds(30))
        guard wakes.contains(where: { $0.deviceToken == token && $0.status == 200 }) else {
            throw DemoError(description: "the stand-in got no wake for the iPad")
        }
        let woken = ContinuousClock.now
        let viewChanged = try await pad.handleBackgroundNotification()
        let shown = ContinuousClock.now
        for device in devices where device.name != "Mac" {
            write(Self.line(device.name, await device.client.currentView, note: device.name == "iPad" ? "woken" : ""))
        }
        let wokenAfter = String(format: "%.1f", (woken - changed).inSeconds), shownAfter = String(format: "%.2f", (shown - woken).inSeconds)
        write("   The iPad was woken by a background notification \(wokenAfter) s after the iPhone's change and showed it \(shownAfter) s later"
            + (viewChanged ? ".\n" : " (its view had not changed).\n"))
        try await devices[2].client.sync()
    }

    private func shortcut(_ identifier: String, on client: ShortcutSyncClient) async throws -> ShortcutView {
        guard let found = await client.shortcuts().first(where: { $0.identifier == identifier }) else {
            throw DemoError(description: "the iPhone does not see its own \(identifier) donation")
        }
        return found
    }

    /// One device's view on one line: shortcuts with their donation counts, then phrases.
    static func line(_ name: String, _ view: DeviceView, note: String) -> String {
        let shortcuts = view.shortcuts.values.sorted { $0.shortcutID < $1.shortcutID }.map { "\($0.identifier)×\($0.donationCount)" }
        let phrases = view.voiceShortcuts.values.sorted { $0.phrase < $1.phrase }.map {
            "\"\($0.phrase)\"→\($0.identifier)" + ($0.status == .phraseConflict ? " (conflict)" : "") + ($0.targetAvailable ? "" : " (unavailable)")
        }
        let padded = name.padding(toLength: 7, withPad: " ", startingAt: 0)
        let items = (shortcuts.isEmpty ? "-" : shortcuts.joined(separator: " ")).padding(toLength: 34, withPad: " ", startingAt: 0)
        return "   \(padded) \(items) \(phrases.isEmpty ? "-" : phrases.joined(separator: ", "))\(note.isEmpty ? "" : "  [\(note)]")\n"
    }
}
