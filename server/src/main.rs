//! The `verbatim` command line: parse arguments, set up logging, call the library.
//! The grammar is in [`cli::args`]; the agent-facing commands run in [`cli`].

mod cli;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use cli::args::{Cli, Command};

fn init_logging(log_file: Option<&PathBuf>, default_level: &str) -> Result<(), String> {
    let filter = tracing_subscriber::EnvFilter::try_from_env("VERBATIM_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_level));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_ansi(false);
    match log_file {
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|error| format!("cannot open the log file {}: {error}", path.display()))?;
            builder.with_writer(std::sync::Mutex::new(file)).init();
        }
        None => builder.with_writer(std::io::stderr).init(),
    }
    Ok(())
}

fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|error| {
        eprintln!("verbatim: cannot start the async runtime: {error}");
        ExitCode::FAILURE
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Lsp { socket, log_file, stdio: _ } => {
            if let Err(message) = init_logging(log_file.as_ref(), "info") {
                eprintln!("verbatim: {message}");
                return ExitCode::FAILURE;
            }
            let runtime = match runtime() {
                Ok(runtime) => runtime,
                Err(code) => return code,
            };
            let outcome = runtime.block_on(verbatim::transport::lsp::run(verbatim::transport::lsp::LspOptions {
                socket,
                disk_writer: Some(std::sync::Arc::new(verbatim::headless::revert::ServerDisk)),
            }));
            // Reading stdin occupies a blocking thread that only ends when the editor
            // closes the pipe; do not wait for it.
            runtime.shutdown_timeout(std::time::Duration::from_millis(100));
            match outcome {
                Ok(verbatim::transport::lsp::Ending::Clean) => ExitCode::SUCCESS,
                Ok(verbatim::transport::lsp::Ending::Abrupt) => ExitCode::from(1),
                Err(error) => {
                    eprintln!("verbatim: {error}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Mcp { route, log_file, diagnostics } => {
            if let Err(message) = init_logging(log_file.as_ref(), "warn") {
                eprintln!("verbatim: {message}");
                return ExitCode::FAILURE;
            }
            let mut options = match cli::frontend_options(&route) {
                Ok(options) => options,
                Err(message) => {
                    eprintln!("verbatim: {message}");
                    return ExitCode::FAILURE;
                }
            };
            // A model without an editor may edit only below where it was started.
            if options.roots.is_empty() {
                options.roots.push(options.cwd.clone());
            }
            let agent_fixed = route.agent.is_some();
            let runtime = match runtime() {
                Ok(runtime) => runtime,
                Err(code) => return code,
            };
            let diagnostics = diagnostics.as_deref().and_then(verbatim::service::protocol::DiagnosticsLevel::from_name);
            let outcome = runtime.block_on(verbatim::frontend::mcp::serve(
                verbatim::frontend::Frontend::new(options),
                agent_fixed,
                diagnostics,
            ));
            runtime.shutdown_timeout(std::time::Duration::from_millis(100));
            match outcome {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("verbatim: {error}");
                    ExitCode::FAILURE
                }
            }
        }
        other => {
            if let Err(message) = init_logging(None, "warn") {
                eprintln!("verbatim: {message}");
                return ExitCode::FAILURE;
            }
            cli::run(other)
        }
    }
}
