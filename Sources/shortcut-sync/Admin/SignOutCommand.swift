import ArgumentParser
import Foundation
import ShortcutSyncAdmin
import ShortcutSyncServer

/// `admin sign-out`: what `DELETE /v1/devices/{id}` does, for an operator (a lost phone).
struct SignOutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-out",
        abstract: "Sign a device out: its token stops working on every server at once, its streams end; its events stay.")

    @OptionGroup var options: AdminOptions
    @Option(help: "The account's id.") var account: IdentifierArgument
    @Option(help: "The device's id.") var device: IdentifierArgument

    func run() async throws {
        try await options.withOperator { admin in
            try await admin.signOut(device: device.uuid, account: account.uuid)
            let text = options.json
                ? "{\"accountId\":\"\(account.uuid.uuidString.lowercased())\",\"deviceId\":\"\(device.uuid.uuidString.lowercased())\",\"signedOut\":true}\n"
                : "device \(device.uuid.uuidString.lowercased()) is signed out\n"
            FileHandle.standardOutput.write(Data(text.utf8))
        }
    }
}
