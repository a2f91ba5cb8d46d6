@testable import ShortcutSyncStore
import Testing

/// Migration scripts split into the statements they hold.
@Suite struct SQLScriptTests {
    @Test func splitsOnSemicolonsOutsideQuotesCommentsAndDollarBodies() {
        let script = """
            -- a comment; with a semicolon
            CREATE TABLE a (x text DEFAULT ';');
            CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END; $$;
            /* block; comment */ SELECT 'it''s;' ;
            """
        let statements = SQLScript.statements(in: script)
        #expect(statements.count == 3)
        #expect(statements[1].hasSuffix("END; $$"))
        #expect(statements[2] == "SELECT 'it''s;'")
    }
}
