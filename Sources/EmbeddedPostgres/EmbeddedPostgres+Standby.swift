import Foundation
import Logging
import SecretFiles

extension EmbeddedPostgres {
    /// Makes this cluster a streaming-replication standby of the running cluster at `primary`:
    /// `pg_basebackup -R` copies it into this cluster's directory, and the next `start()` runs it
    /// as a standby, replicating asynchronously as most do. For failover drills
    /// (`FailoverTests`): the primary killed, `promote()` makes this one the primary.
    ///
    /// The copy has the primary's password, kept in this cluster's owner-only password file; the
    /// standby reaches the primary with an owner-only passfile in its home, named by the
    /// `primary_conninfo` that `-R` writes.
    public func makeStandby(of primary: Connection) async throws {
        let asRoot = getuid() == 0
        let tools = try PostgresTools.find(asPostgres: asRoot)
        let owner: (uid: uid_t, gid: gid_t)? = asRoot ? try Self.postgresUser() : nil
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        let home = clusterHome(asRoot: asRoot)
        try prepareHome(home, owner: owner)
        _ = try SecretFile(passwordFile).readOrCreate { primary.password }
        let passfile = home.appendingPathComponent("replication.pgpass")
        unlink(passfile.path)
        try SecretFile.create(at: passfile.path, contents: "\(primary.host):\(primary.port):*:\(primary.username):\(primary.password)\n",
                              owner: owner)
        let cluster = home.appendingPathComponent("cluster")
        try? FileManager.default.removeItem(at: cluster)
        try await tools.run("pg_basebackup", [
            "-D", cluster.path, "-R", "-X", "stream", "--no-sync",
            "-d", "host=\(primary.host) port=\(primary.port) user=\(primary.username) passfile=\(passfile.path)",
        ])
        logger.info("made a standby of the embedded PostgreSQL", metadata: ["primary_port": "\(primary.port)", "cluster": "\(cluster.path)"])
    }

    /// `pg_ctl promote` of a standby this process started: it stops replicating and takes writes.
    public func promote() async throws {
        let asRoot = getuid() == 0
        let tools = try PostgresTools.find(asPostgres: asRoot)
        try await tools.run("pg_ctl", ["-D", clusterHome(asRoot: asRoot).appendingPathComponent("cluster").path, "-w", "-t", "60", "promote"])
    }
}
