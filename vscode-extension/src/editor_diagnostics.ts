/**
 * VS Code's side of `verbatim/diagnostics`: feeds the {@link DiagnosticsTracker}
 * from `vscode.languages.onDidChangeDiagnostics` (and the documents' opening
 * and closing), from the extension's start
 * (so a change that came before the server asked still counts), and reads
 * diagnostics and document versions from VS Code. URIs are keyed by
 * `Uri.toString()`, the spelling the language client sends the server.
 */

import * as vscode from "vscode";

import { DiagnosticsTracker, toWireDiagnostic, type DiagnosticsSource } from "./diagnostics";

export class EditorDiagnostics implements vscode.Disposable {
    readonly tracker: DiagnosticsTracker;
    private readonly subscriptions: vscode.Disposable[];

    constructor() {
        const source: DiagnosticsSource = {
            diagnostics: (uri) => vscode.languages.getDiagnostics(vscode.Uri.parse(uri)).map(toWireDiagnostic),
            all: () => vscode.languages.getDiagnostics().map(([uri, diagnostics]) => [uri.toString(), diagnostics.map(toWireDiagnostic)]),
            version: (uri) => openDocument(uri)?.version,
            languageId: (uri) => openDocument(uri)?.languageId,
        };
        this.tracker = new DiagnosticsTracker(source);
        for (const document of vscode.workspace.textDocuments) this.tracker.didOpen(document.uri.toString());
        this.subscriptions = [
            vscode.languages.onDidChangeDiagnostics((event) => this.tracker.didChange(event.uris.map((uri) => uri.toString()))),
            vscode.workspace.onDidOpenTextDocument((document) => this.tracker.didOpen(document.uri.toString())),
            vscode.workspace.onDidCloseTextDocument((document) => this.tracker.didClose(document.uri.toString())),
        ];
    }

    dispose(): void {
        for (const subscription of this.subscriptions) subscription.dispose();
    }
}

function openDocument(uri: string): vscode.TextDocument | undefined {
    return vscode.workspace.textDocuments.find((document) => document.uri.toString() === uri);
}
