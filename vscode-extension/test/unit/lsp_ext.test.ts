/**
 * Checks `src/lsp_ext.ts` against `docs/protocol.md`, the protocol's single
 * source of truth: the method names, the error kinds and codes, the
 * initialization options, the discovery file, and the field names of every
 * params and result type. Field names are read from the page's JSON examples
 * and tables, and from the TypeScript declarations through the compiler API.
 */

import * as assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import ts from "typescript";
import type { Position, Range } from "vscode-languageserver-protocol";

import * as lsp_ext from "../../src/lsp_ext";

function findUp(relative: string): string {
    for (let dir = __dirname; ; dir = path.dirname(dir)) {
        const candidate = path.join(dir, relative);
        if (existsSync(candidate)) return candidate;
        if (path.dirname(dir) === dir) throw new Error(`${relative} not found above ${__dirname}`);
    }
}

const protocolPath = findUp("docs/protocol.md");
const lspExtPath = findUp("vscode-extension/src/lsp_ext.ts");
const protocol = readFileSync(protocolPath, "utf8");

// --- Reading docs/protocol.md ----------------------------------------------------

interface Section {
    heading: string;
    body: string;
}

/** Splits the page at `##` and `###` headings. */
function sections(markdown: string): Section[] {
    const result: Section[] = [];
    let current: Section | undefined;
    for (const line of markdown.split("\n")) {
        const heading = /^#{2,3} (.*)$/.exec(line);
        if (heading) {
            current = { heading: heading[1] ?? "", body: "" };
            result.push(current);
        } else if (current) {
            current.body += `${line}\n`;
        }
    }
    return result;
}

function section(heading: string): Section {
    const found = sections(protocol).find((candidate) => candidate.heading === heading);
    assert.ok(found, `docs/protocol.md has no section "${heading}"`);
    return found;
}

/** The section of a method: its heading starts with the method name in backticks. */
function methodSection(method: string): Section {
    const found = sections(protocol).find((candidate) => candidate.heading.startsWith(`\`${method}\``));
    assert.ok(found, `docs/protocol.md has no section for ${method}`);
    return found;
}

function codeBlocks(markdown: string): string[] {
    return [...markdown.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => match[1] ?? "");
}

/** Every `"key":` in a JSON example (the examples hold comments and ellipses, so no JSON.parse). */
function jsonKeys(json: string): Set<string> {
    return new Set([...json.matchAll(/"([A-Za-z][A-Za-z0-9]*)"\s*:/g)].map((match) => match[1] ?? ""));
}

/** Rows of every table in a section, as arrays of cells. */
function tableRows(markdown: string): string[][] {
    return markdown
        .split("\n")
        .filter((line) => line.startsWith("|") && !/^\|[-| ]+\|$/.test(line))
        .map((line) =>
            line
                .slice(1, -1)
                .split("|")
                .map((cell) => cell.trim()),
        );
}

/** `name` out of a cell like "`name`" (or "`data.name`"). */
function backticked(cell: string): string[] {
    return [...cell.matchAll(/`(?:data\.)?([A-Za-z][A-Za-z0-9]*)`/g)].map((match) => match[1] ?? "");
}

/**
 * The field names of the shapes written inline, in backticks, as the page does
 * for small params and results: `{uri, range?}`, `{saved: boolean, message?: string}`.
 */
function inlineShapeFields(markdown: string): Set<string> {
    const names = new Set<string>();
    for (const match of markdown.matchAll(/`(\{[^`]*\})`/g)) {
        for (const field of (match[1] ?? "").matchAll(/[{,]\s*([A-Za-z][A-Za-z0-9]*)\??\s*(?=[,}:])/g)) names.add(field[1] ?? "");
    }
    return names;
}

/** The field names a section documents: keys of its JSON examples, inline shapes, first table column, and bullet heads. */
function documentedFields(body: string): Set<string> {
    const names = new Set<string>(inlineShapeFields(body));
    for (const block of codeBlocks(body)) for (const key of jsonKeys(block)) names.add(key);
    for (const row of tableRows(body).slice(1)) for (const name of backticked(row[0] ?? "")) names.add(name);
    for (const match of body.matchAll(/^- `([A-Za-z][A-Za-z0-9]*)`/gm)) names.add(match[1] ?? "");
    return names;
}

/** Every name the page mentions as a JSON key or in backticks. */
const everyDocumentedName = new Set<string>([...jsonKeys(protocol), ...backticked(protocol), ...inlineShapeFields(protocol)]);

// --- Reading src/lsp_ext.ts -------------------------------------------------------

/** `keys` unchanged, but the compiler rejects a list that misses a key of `T` or names one `T` lacks. */
function everyKeyOf<T>() {
    return <const K extends readonly (keyof T)[]>(keys: K & ([Exclude<keyof T, K[number]>] extends [never] ? unknown : never)): K => keys;
}

/**
 * The LSP types lsp_ext.ts uses without declaring them: their fields, and the
 * LSP types those fields hold. `npm run check` keeps the field lists exact.
 */
const LSP_TYPES: Record<string, { fields: readonly string[]; holds: readonly string[] }> = {
    Range: { fields: everyKeyOf<Range>()(["start", "end"]), holds: ["Position"] },
    Position: { fields: everyKeyOf<Position>()(["line", "character"]), holds: [] },
};

const source = ts.createSourceFile(lspExtPath, readFileSync(lspExtPath, "utf8"), ts.ScriptTarget.ES2022, true);

const declarations = new Map<string, ts.InterfaceDeclaration | ts.TypeAliasDeclaration>();
for (const statement of source.statements) {
    if (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) {
        declarations.set(statement.name.text, statement);
    }
}

/** The property names of a type, following references to other types of lsp_ext.ts. */
function fieldsOfType(node: ts.TypeNode | undefined, into: Set<string>, seen: Set<string>): Set<string> {
    if (node === undefined) return into;
    if (ts.isTypeReferenceNode(node)) {
        const name = node.typeName.getText(source);
        for (const argument of node.typeArguments ?? []) fieldsOfType(argument, into, seen);
        fieldsOfDeclaration(name, into, seen);
    } else if (ts.isTypeLiteralNode(node)) {
        fieldsOfMembers(node.members, into, seen);
    } else if (ts.isArrayTypeNode(node)) {
        fieldsOfType(node.elementType, into, seen);
    } else if (ts.isUnionTypeNode(node) || ts.isIntersectionTypeNode(node)) {
        for (const member of node.types) fieldsOfType(member, into, seen);
    } else if (ts.isParenthesizedTypeNode(node)) {
        fieldsOfType(node.type, into, seen);
    } else if (ts.isTupleTypeNode(node)) {
        for (const element of node.elements) fieldsOfType(element, into, seen);
    }
    return into;
}

function fieldsOfMembers(members: ts.NodeArray<ts.TypeElement>, into: Set<string>, seen: Set<string>): void {
    for (const member of members) {
        if (ts.isPropertySignature(member)) {
            into.add(member.name.getText(source));
            fieldsOfType(member.type, into, seen);
        }
    }
}

function fieldsOfDeclaration(name: string, into: Set<string> = new Set(), seen: Set<string> = new Set()): Set<string> {
    const declaration = declarations.get(name);
    const lspType = LSP_TYPES[name];
    if (seen.has(name)) return into;
    if (declaration === undefined && lspType !== undefined) {
        seen.add(name);
        for (const field of lspType.fields) into.add(field);
        for (const held of lspType.holds) fieldsOfDeclaration(held, into, seen);
        return into;
    }
    if (declaration === undefined) return into;
    seen.add(name);
    if (ts.isInterfaceDeclaration(declaration)) {
        for (const clause of declaration.heritageClauses ?? []) {
            for (const type of clause.types) fieldsOfDeclaration(type.expression.getText(source), into, seen);
        }
        fieldsOfMembers(declaration.members, into, seen);
    } else {
        fieldsOfType(declaration.type, into, seen);
    }
    return into;
}

/** The string literal values in a type (`"reload" | "offered" | …`), following references to other types of lsp_ext.ts. */
function literalsOfType(node: ts.TypeNode | undefined, into: Set<string>, seen: Set<string>): Set<string> {
    if (node === undefined) return into;
    if (ts.isLiteralTypeNode(node) && ts.isStringLiteral(node.literal)) {
        into.add(node.literal.text);
    } else if (ts.isTypeReferenceNode(node)) {
        const name = node.typeName.getText(source);
        const declaration = declarations.get(name);
        if (declaration === undefined || seen.has(name)) return into;
        seen.add(name);
        if (ts.isTypeAliasDeclaration(declaration)) literalsOfType(declaration.type, into, seen);
        else for (const member of declaration.members) if (ts.isPropertySignature(member)) literalsOfType(member.type, into, seen);
    } else if (ts.isUnionTypeNode(node) || ts.isIntersectionTypeNode(node)) {
        for (const member of node.types) literalsOfType(member, into, seen);
    } else if (ts.isArrayTypeNode(node)) {
        literalsOfType(node.elementType, into, seen);
    } else if (ts.isParenthesizedTypeNode(node)) {
        literalsOfType(node.type, into, seen);
    } else if (ts.isTypeLiteralNode(node)) {
        for (const member of node.members) if (ts.isPropertySignature(member)) literalsOfType(member.type, into, seen);
    }
    return into;
}

/** The string literals of a type alias of lsp_ext.ts. */
function literalsOf(name: string): Set<string> {
    const declaration = declarations.get(name);
    assert.ok(declaration && ts.isTypeAliasDeclaration(declaration), `lsp_ext.ts declares no type ${name}`);
    return literalsOfType(declaration.type, new Set(), new Set());
}

/** Own property names of one interface (no recursion), for exact comparisons. */
function ownFields(name: string): string[] {
    const declaration = declarations.get(name);
    assert.ok(declaration && ts.isInterfaceDeclaration(declaration), `lsp_ext.ts declares no interface ${name}`);
    return declaration.members.filter(ts.isPropertySignature).map((member) => member.name.getText(source));
}

interface MethodDeclaration {
    variable: string;
    method: string;
    kind: "request" | "notification";
    /** The type arguments: params, result (and error data) for a request; params for a notification. */
    typeArguments: ts.TypeNode[];
}

/** Every `new RequestType…<…>("verbatim/…")` and `new NotificationType…` in lsp_ext.ts. */
function methodDeclarations(): MethodDeclaration[] {
    const result: MethodDeclaration[] = [];
    for (const statement of source.statements) {
        if (!ts.isVariableStatement(statement)) continue;
        for (const declaration of statement.declarationList.declarations) {
            const init = declaration.initializer;
            if (!init || !ts.isNewExpression(init)) continue;
            const constructor = init.expression.getText(source);
            const argument = init.arguments?.[0];
            if (!argument || !ts.isStringLiteral(argument)) continue;
            result.push({
                variable: declaration.name.getText(source),
                method: argument.text,
                kind: constructor.startsWith("Request") ? "request" : "notification",
                typeArguments: [...(init.typeArguments ?? [])],
            });
        }
    }
    return result;
}

// --- The checks ---------------------------------------------------------------------

const documentedMethods = sections(protocol)
    .map((candidate) => /^`(verbatim\/[A-Za-z]+)`/.exec(candidate.heading)?.[1])
    .filter((method): method is string => method !== undefined);

describe("lsp_ext.ts matches docs/protocol.md", () => {
    test("the page documents the methods we expect to parse", () => {
        assert.ok(documentedMethods.length >= 8, `only found ${documentedMethods.join(", ")}`);
    });

    test("every documented method is declared, with the same name, and nothing else is", () => {
        const declared = methodDeclarations().map((declaration) => declaration.method);
        assert.deepEqual([...declared].sort(), [...documentedMethods].sort());
    });

    test("the agent method list in `initialize` equals METHODS", () => {
        const block = codeBlocks(section("`initialize` for agents").body).find((json) => json.includes('"methods"'));
        assert.ok(block, "no initialize result example with methods");
        const listed = [...(/"methods":\s*\[([^\]]*)\]/.exec(block)?.[1] ?? "").matchAll(/"([^"]+)"/g)].map((m) => m[1]);
        assert.deepEqual(listed, [...lsp_ext.METHODS]);
    });

    test("requests and notifications are what the page says", () => {
        for (const declaration of methodDeclarations()) {
            const isNotification = /notification/i.test(methodSection(declaration.method).heading);
            assert.equal(declaration.kind, isNotification ? "notification" : "request", declaration.method);
        }
    });

    for (const method of documentedMethods) {
        test(`${method}: every documented field is in its params or result type`, () => {
            const declaration = methodDeclarations().find((candidate) => candidate.method === method);
            assert.ok(declaration, `${method} is not declared`);
            const documented = documentedFields(methodSection(method).body.concat(extraDocumentation(method)));
            const [params, result] = declaration.kind === "request" && declaration.typeArguments.length === 2
                ? [undefined, declaration.typeArguments[0]] // RequestType0<Result, Error>
                : [declaration.typeArguments[0], declaration.typeArguments[1]];
            const declared = new Set<string>();
            fieldsOfType(params, declared, new Set());
            fieldsOfType(result, declared, new Set());
            // A bullet may document a value rather than a field ("- `reload`: …" for a `kind`).
            const values = new Set<string>();
            literalsOfType(params, values, new Set());
            literalsOfType(result, values, new Set());
            const missing = [...documented].filter((name) => !declared.has(name) && !values.has(name));
            assert.deepEqual(missing, [], `${method}: documented but not in lsp_ext.ts`);
        });
    }

    test("every type lsp_ext.ts refers to is declared there or known to LSP_TYPES", () => {
        const referenced = new Set<string>();
        const visit = (node: ts.Node): void => {
            if (ts.isTypeReferenceNode(node)) referenced.add(node.typeName.getText(source));
            ts.forEachChild(node, visit);
        };
        for (const declaration of declarations.values()) visit(declaration);
        const builtins = new Set(["Record", "Partial", "Readonly", "Array", "ReadonlyArray"]);
        const unknown = [...referenced].filter((name) => !declarations.has(name) && !(name in LSP_TYPES) && !builtins.has(name));
        assert.deepEqual(unknown, [], "types whose fields this test cannot check against the page");
    });

    test("every field lsp_ext.ts declares is named in the page", () => {
        const undocumented: string[] = [];
        for (const [name] of declarations) {
            for (const field of fieldsOfDeclaration(name, new Set(), new Set())) {
                if (!everyDocumentedName.has(field)) undocumented.push(`${name}.${field}`);
            }
        }
        assert.deepEqual(undocumented, []);
    });

    test("error kinds and codes", () => {
        const rows = tableRows(section("Errors").body).filter((row) => /^-330\d\d$/.test(row[0] ?? ""));
        const documented = Object.fromEntries(rows.map((row) => [backticked(row[1] ?? "")[0], Number(row[0])]));
        assert.deepEqual(lsp_ext.ERROR_CODES, documented);
        assert.ok(Object.values(lsp_ext.ERROR_CODES).every((code) => code >= -33099 && code <= -33000));
    });

    test("error data fields", () => {
        const errors = section("Errors").body;
        const documented = new Set<string>(["kind", "edit"]);
        // "`reason` (the editor's `failureReason`, may be null)": the parenthesis explains, it names no field.
        for (const row of tableRows(errors).slice(1)) {
            for (const name of backticked((row[3] ?? "").replace(/\([^)]*\)/g, ""))) documented.add(name);
        }
        for (const block of codeBlocks(errors)) for (const key of jsonKeys(block)) documented.add(key);
        for (const field of ["code", "message", "data"]) documented.delete(field); // the JSON-RPC envelope
        const declared = fieldsOfDeclaration("ErrorData");
        assert.deepEqual([...documented].filter((name) => !declared.has(name)), []);
        assert.deepEqual(
            ownFields("ErrorData").filter((name) => !documented.has(name)),
            [],
            "ErrorData fields the error table does not mention",
        );
    });

    test("initialization options", () => {
        const rows = tableRows(section("`initialize` for editors").body).slice(1);
        const documented = rows.flatMap((row) => backticked(row[0] ?? ""));
        assert.deepEqual(ownFields("InitializationOptions").sort(), documented.sort());
    });

    test("discovery file", () => {
        const block = codeBlocks(section("Discovery").body)[0] ?? "";
        const topLevel = [...jsonKeys(block)].filter((key) => key !== "name" && key !== "version");
        assert.deepEqual(ownFields("DiscoveryFile").sort(), topLevel.sort());
    });

    test("the hunks of a proposal and the per-hunk answer", () => {
        const documented = new Set<string>();
        for (const block of codeBlocks(section("Hunks: what the person kept").body)) for (const key of jsonKeys(block)) documented.add(key);
        // The LSP envelope: `ApplyWorkspaceEditParams` and its `WorkspaceEdit`.
        for (const field of ["edit", "documentChanges", "label"]) documented.delete(field);
        const declared = new Set(["ApplyEditVerbatim", "ProposalHunk", "HunkDecision", "HunkAnswer"].flatMap((name) => [...fieldsOfDeclaration(name)]));
        declared.add("verbatim");
        assert.deepEqual([...documented].filter((name) => !declared.has(name)), []);
    });

    test("the Claude Code endpoint in the editor's initialize result", () => {
        const body = section("The endpoint and the lock file").body;
        const path = /`capabilities\.experimental\.([A-Za-z.]+) = \{"([A-Za-z]+)": \d+\}`/.exec(body);
        assert.ok(path, "no `capabilities.experimental.….claudeCode = {\"port\": …}` in the section");
        const [verbatim, claudeCode] = (path[1] ?? "").split(".");
        assert.equal(verbatim, "verbatim");
        assert.equal(claudeCode, "claudeCode");
        assert.deepEqual([...fieldsOfDeclaration("EditorExperimentalCapabilities")].slice(0, 3), [verbatim, claudeCode, path[2]]);
    });

    test("the Gemini CLI companion endpoint in the editor's initialize result", () => {
        const body = section("The endpoint and the discovery files").body;
        const path = /`capabilities\.experimental\.verbatim\.geminiCli = \{([^}]*)\}`/.exec(body);
        assert.ok(path, "no `capabilities.experimental.verbatim.geminiCli = {…}` in the section");
        const documented = [...(path[1] ?? "").matchAll(/"([A-Za-z]+)"/g)].map((match) => match[1]);
        // Fields are listed once: `port` is Claude Code's already.
        const expected = [...new Set(["verbatim", "claudeCode", "port", "geminiCli", ...documented])];
        assert.deepEqual([...fieldsOfDeclaration("EditorExperimentalCapabilities")], expected);
    });

    test("the journal's outcomes", () => {
        const row = tableRows(section("Journal").body).find((cells) => cells[0] === "`outcome`");
        assert.ok(row, "no `outcome` row in the journal's table");
        // "`partial` (some hunks left out; `hunksLeftOut` lists …)": what a parenthesis names is no outcome.
        const documented = backticked((row[1] ?? "").replace(/\([^)]*\)/g, ""));
        assert.deepEqual([...literalsOf("JournalOutcome")].sort(), [...documented].sort());
    });

    test("why an entry cannot be reverted", () => {
        const listed = /`whyNot` \(([^)]*)\)/.exec(methodSection("verbatim/timeline").body)?.[1];
        assert.ok(listed, "no `whyNot` (…) in the verbatim/timeline section");
        assert.deepEqual([...literalsOf("NotRevertibleReason")].sort(), backticked(listed.replace(/:.*$/, "")).sort());
    });

    test("a revert's outcomes, ways and actions", () => {
        const body = methodSection("verbatim/revert").body.replace(/\s+/g, " ");
        const after = (field: string): string[] => {
            const text = new RegExp(`\`${field.replace(/[[\].]/g, "\\$&")}\`: (.*?)(?:;|\\.) `).exec(body)?.[1];
            assert.ok(text, `no \`${field}\`: … in the verbatim/revert section`);
            return backticked(text.replace(/\([^)]*\)/g, "")).sort();
        };
        assert.deepEqual([...literalsOf("RevertOutcome")].sort(), after("outcome"));
        const file = declarations.get("RevertedFile");
        assert.ok(file && ts.isInterfaceDeclaration(file));
        const member = (name: string) => file.members.find((m) => ts.isPropertySignature(m) && m.name.getText(source) === name) as ts.PropertySignature;
        assert.deepEqual([...literalsOfType(member("via").type, new Set(), new Set())].sort(), after("files[].via"));
        assert.deepEqual([...literalsOfType(member("action").type, new Set(), new Set())].sort(), after("action"));
    });

    test("Claude Code's agent name", () => {
        assert.match(section("Who may connect").body, new RegExp(`an agent named \`${lsp_ext.CLAUDE_CODE_AGENT}\``));
    });

    test("the protocol version", () => {
        assert.match(protocol, new RegExp(`Protocol version: \\*\\*${lsp_ext.PROTOCOL_VERSION}\\*\\*`));
    });
});

/**
 * Text elsewhere on the page that documents a method's types: the result of
 * `verbatim/statusChanged` is the `verbatim/status` result, `replaceRange` and
 * `write` return the `EditResult` shown under `strReplace`.
 */
function extraDocumentation(method: string): string {
    switch (method) {
        case "verbatim/statusChanged":
            return methodSection("verbatim/status").body;
        default:
            return "";
    }
}
