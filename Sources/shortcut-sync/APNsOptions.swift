import ArgumentParser
import Foundation
import ShortcutSyncDomain
import ShortcutSyncWake

/// The options of background wakes (DESIGN §7), shared by `serve` and `worker`: the team's APNs
/// key, and for a stand-in (tests, staging) another address and a certificate to trust.
struct APNsOptions: ParsableArguments {
    @Option(help: "The team's APNs signing key, a .p8 file (env SHORTCUT_SYNC_APNS_KEY_FILE). Without a key no background wake is sent.")
    var apnsKeyFile: String?

    @Option(help: "The key's id, 10 characters (env SHORTCUT_SYNC_APNS_KEY_ID).")
    var apnsKeyId: String?

    @Option(help: "The team's id, 10 characters (env SHORTCUT_SYNC_APNS_TEAM_ID).")
    var apnsTeamId: String?

    @Option(name: .customLong("apns-topic"),
            help: "An app whose devices are woken: its bundle id, APNs' topic. Repeat for several (env SHORTCUT_SYNC_APNS_TOPICS, comma-separated). Required with a key; a push token for any other app is refused.")
    var apnsTopics: [String] = []

    @Option(help: "Send to this address instead of Apple's, for every environment: a stand-in (env SHORTCUT_SYNC_APNS_URL).")
    var apnsUrl: String?

    @Option(help: "A PEM certificate to trust besides the system's, for --apns-url (env SHORTCUT_SYNC_APNS_CA_FILE).")
    var apnsCaFile: String?

    @Option(help: "Seconds after a change before a device that has not pulled it is woken.")
    var wakeDelay: Double = 3

    @Option(help: "At most one background wake per device in this many seconds (DESIGN §6: 1200, 20 minutes).")
    var wakeInterval: Double = 1200

    /// The largest key file read: a .p8 is about 250 bytes.
    static let maximumFileBytes = 64 * 1024

    func validate() throws {
        guard (0...3600).contains(wakeDelay) else { throw ValidationError("--wake-delay must be 0 to 3600 seconds") }
        guard (1...86_400).contains(wakeInterval) else { throw ValidationError("--wake-interval must be 1 to 86400 seconds") }
        // The options' shape, before anything starts; the files are read when the command runs.
        let key = try given()
        let topics = try topics()
        if key != nil, topics.isEmpty {
            throw ValidationError("background wakes need --apns-topic (or SHORTCUT_SYNC_APNS_TOPICS): the bundle id of each app whose devices are woken")
        }
    }

    /// `--apns-topic` (or `SHORTCUT_SYNC_APNS_TOPICS`, comma-separated): the apps whose devices
    /// are woken, each a reverse-DNS bundle id; a usage error for any other text.
    func topics(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Set<String> {
        let given = apnsTopics.isEmpty
            ? (environment["SHORTCUT_SYNC_APNS_TOPICS"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            : apnsTopics
        for topic in given where !PushTokenRegistration.isTopic(topic) {
            throw ValidationError("--apns-topic must be an app's bundle id, a reverse-DNS name such as com.example.app, not '\(topic)'")
        }
        return Set(given)
    }

    /// The options given (or their environment variables): nil when no key is given; a usage
    /// error when they are given in part or the address is not an https:// one.
    private func given(environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> (keyFile: String, keyID: String, teamID: String, url: URL?, caFile: String?)? {
        func value(_ option: String?, _ name: String) -> String? {
            (option ?? environment["SHORTCUT_SYNC_APNS_\(name)"]).flatMap { $0.isEmpty ? nil : $0 }
        }
        let keyFile = value(apnsKeyFile, "KEY_FILE"), keyID = value(apnsKeyId, "KEY_ID"), teamID = value(apnsTeamId, "TEAM_ID")
        let url = value(apnsUrl, "URL"), caFile = value(apnsCaFile, "CA_FILE")
        guard keyFile != nil || keyID != nil || teamID != nil else {
            if url != nil || caFile != nil { throw ValidationError("--apns-url and --apns-ca-file need --apns-key-file, --apns-key-id and --apns-team-id") }
            return nil
        }
        guard let keyFile, let keyID, let teamID else {
            throw ValidationError("background wakes need all three of --apns-key-file, --apns-key-id and --apns-team-id (or SHORTCUT_SYNC_APNS_KEY_FILE, _KEY_ID, _TEAM_ID)")
        }
        var parsed: URL?
        if let url {
            guard let address = URL(string: url), address.scheme == "https", address.host != nil else {
                throw ValidationError("--apns-url must be an https:// address, not \(url)")
            }
            parsed = address
        }
        return (keyFile, keyID, teamID, parsed, caFile)
    }

    var wake: WakeConfiguration {
        var wake = WakeConfiguration()
        wake.delay = .milliseconds(Int64(wakeDelay * 1000))
        wake.interval = .milliseconds(Int64(wakeInterval * 1000))
        return wake
    }

    /// The APNs configuration, nil when no key is given; a usage error when it is given in part
    /// or a file cannot be read. The key itself is checked when the service starts.
    func configuration() throws -> APNsConfiguration? {
        guard let given = try given() else { return nil }
        var configuration = APNsConfiguration(keyPEM: try Self.read(given.keyFile, "--apns-key-file"), keyID: given.keyID, teamID: given.teamID,
                                              topics: try topics())
        configuration.url = given.url
        if let caFile = given.caFile { configuration.additionalTrustRootsPEM = try Self.read(caFile, "--apns-ca-file") }
        return configuration
    }

    /// A small file's text; a usage error that names the option when it cannot be read.
    private static func read(_ path: String, _ option: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw ValidationError("\(option): cannot read \(path)") }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: maximumFileBytes + 1)) ?? nil
        guard let data, data.count <= maximumFileBytes, let text = String(data: data, encoding: .utf8) else {
            throw ValidationError("\(option): \(path) is not a PEM file of at most \(maximumFileBytes) bytes")
        }
        return text
    }
}
