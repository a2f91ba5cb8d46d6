import CoreMetrics
import Foundation
import Logging
import ShortcutSyncAPI
import ShortcutSyncDomain
import ShortcutSyncStore

extension SyncAPI {
    func createAccount(_ input: Operations.CreateAccount.Input) async throws -> Operations.CreateAccount.Output {
        try requireAdmin()
        let token = Tokens.make(.account)
        let account = try await accounts.createAccount(tokenHash: Tokens.hash(token))
        logger.info("account created", metadata: ["account": "\(account)"])
        return .created(.init(body: .json(.init(accountId: account.uuidString, accountToken: token))))
    }

    func createDevice(_ input: Operations.CreateDevice.Input) async throws -> Operations.CreateDevice.Output {
        let account = try requireAccount()
        guard case .json(let body) = input.body else { throw APIProblem.malformed("expected a JSON body") }
        // As openapi.yaml says: 1 to 200 code points as sent, not blank, no control character (an
        // operator's terminal shows the name); kept without the blanks around it.
        let scalars = body.name.unicodeScalars
        if let control = ControlCharacters.first(in: body.name) {
            throw APIProblem.invalid([FieldError(pointer: "/name", detail: "must not contain a control character (\(ControlCharacters.escaped(String(control))))")])
        }
        guard (1...200).contains(scalars.count),
              let first = scalars.firstIndex(where: { !BlankText.isBlank($0) }),
              let last = scalars.lastIndex(where: { !BlankText.isBlank($0) }) else {
            throw APIProblem.invalid([FieldError(pointer: "/name", detail: "must be 1 to 200 characters, not blank, without control characters")])
        }
        let name = String(scalars[first...last])
        try chargeDeviceChange(account, signIns, "signs in")
        let token = Tokens.make(.device)
        let device: UUID
        do {
            device = try await accounts.createDevice(account: account, name: name, platform: body.platform.rawValue, tokenHash: Tokens.hash(token),
                                                  maximumDevices: maximumDevices, signedInWith: Caller.accountTokenHash)
        } catch let limit as PersonLimit {
            throw APIProblem.limitReached(limit)
        } catch is AccountTokenReplaced {
            // Rotated (or the account erased) since this server checked the token: it no longer holds.
            throw APIProblem.unauthorized
        }
        logger.info("device signed in", metadata: ["account": "\(account)", "device": "\(device)"])
        return .created(.init(body: .json(.init(deviceId: device.uuidString, deviceToken: token))))
    }

    func deleteDevice(_ input: Operations.DeleteDevice.Input) async throws -> Operations.DeleteDevice.Output {
        let account = try requireAccount()
        // Another account's device, or no device at all, is not found (ids of others are not
        // confirmed), and takes nothing from the budget that signs a real intruder out.
        guard let device = UUID(canonical: input.path.deviceId), try await accounts.holds(device: device, account: account) else {
            throw APIProblem.notFound("this account has no device \(input.path.deviceId)")
        }
        try chargeDeviceChange(account, signOuts, "signs out")
        guard try await events.signOut(device: device, account: account, wallMillis: now()) else {
            throw APIProblem.notFound("this account has no device \(input.path.deviceId)")
        }
        // Other servers end theirs when the sign-out's notification reaches them.
        hub.endSessions(device: device, account: account)
        logger.info("device signed out", metadata: ["account": "\(account)", "device": "\(device)"])
        return .noContent(.init())
    }

    /// Takes one sign-in or sign-out from the account's budget (issue 56), before anything is
    /// stored or announced: past it, `429` with `Retry-After`. A refused request costs nothing.
    private func chargeDeviceChange(_ account: UUID, _ budget: Budget, _ what: String) throws {
        guard let wait = budget.charge(account, 1) else { return }
        ServerMetrics.deviceChangesOverBudget.increment()
        throw APIProblem.deviceChangesOverBudget(what, retryAfter: wait, budget)
    }
}

extension SyncAPI {
    /// The account's signed-in devices and what each has of it ("did my iPad get it?"), for the
    /// account's token or any of its devices' (a device's call is one of its reads).
    func listDevices(_ input: Operations.ListDevices.Input) async throws -> Operations.ListDevices.Output {
        let account: UUID
        switch Caller.current {
        case .account(let caller): account = caller
        case .device: account = try requireDeviceRead().account
        default: throw APIProblem.unauthorized
        }
        let (version, learningPaused, devices) = try await deviceSync.devices(account: account)
        return .ok(.init(body: .json(.init(version: version, learning: learningPaused ? .paused : .on, devices: devices.map { device in
            .init(learning: device.learningPaused ? .paused : .on, deviceId: device.deviceId.uuidString, name: device.name,
                  // Platforms are stored as the API's words, which a device was made with.
                  platform: Components.Schemas.Platform(rawValue: device.platform) ?? .iOS,
                  syncedVersion: device.syncedVersion, syncedAt: device.syncedAt)
        }))))
    }
}
