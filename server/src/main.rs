//! The `verbatim` command line: parse arguments, set up logging, call the library.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "verbatim", version, about = "Let AI agents edit files inside your editor by quoting text")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve an editor on stdio (the editor starts this) and agents on a Unix socket.
    Lsp {
        /// Put the agent socket here instead of the runtime directory.
        #[arg(long)]
        socket: Option<PathBuf>,
        /// Write logs to this file instead of stderr.
        #[arg(long)]
        log_file: Option<PathBuf>,
        /// Accepted and ignored: the editor is always served on stdio (LSP clients add this flag).
        #[arg(long, hide = true)]
        stdio: bool,
    },
}

fn init_logging(log_file: Option<&PathBuf>) -> Result<(), String> {
    let filter = tracing_subscriber::EnvFilter::try_from_env("VERBATIM_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Lsp { socket, log_file, stdio: _ } => {
            if let Err(message) = init_logging(log_file.as_ref()) {
                eprintln!("verbatim: {message}");
                return ExitCode::FAILURE;
            }
            let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
                Ok(runtime) => runtime,
                Err(error) => {
                    eprintln!("verbatim: cannot start the async runtime: {error}");
                    return ExitCode::FAILURE;
                }
            };
            let outcome = runtime.block_on(verbatim::lsp::run(verbatim::lsp::LspOptions { socket }));
            // Reading stdin occupies a blocking thread that only ends when the editor
            // closes the pipe; do not wait for it.
            runtime.shutdown_timeout(std::time::Duration::from_millis(100));
            match outcome {
                Ok(verbatim::lsp::Ending::Clean) => ExitCode::SUCCESS,
                Ok(verbatim::lsp::Ending::Abrupt) => ExitCode::from(1),
                Err(error) => {
                    eprintln!("verbatim: {error}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
