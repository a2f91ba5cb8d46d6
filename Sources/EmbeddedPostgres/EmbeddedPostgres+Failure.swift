extension EmbeddedPostgres {
    /// Why the cluster could not be found, created or started.
    public enum Failure: Error, CustomStringConvertible {
        case binariesNotFound
        case commandFailed(String, status: Int32, output: String)
        case noPostgresUser
        case unsafeDirectory(String, why: String)

        public var description: String {
            switch self {
            case .binariesNotFound:
                "initdb and pg_ctl were not found on PATH nor under /usr/lib/postgresql/*/bin; install PostgreSQL (apt-get install postgresql) or give --database-url"
            case .commandFailed(let command, let status, let output):
                "\(command) exited with status \(status): \(output)"
            case .noPostgresUser:
                "running as root needs a 'postgres' user to run the embedded cluster as; install PostgreSQL or give --database-url"
            case .unsafeDirectory(let path, let why):
                "refusing to use \(path) for the embedded PostgreSQL: \(why); remove it, or give another --data-dir"
            }
        }
    }
}
