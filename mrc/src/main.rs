//! `mrc`: the project's one command-line front end.

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "mrc", version, about = "Open MRC (Multipath Reliable Connection) SmartNIC toolkit")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Transfer messages between two golden-model endpoints over a lossy multipath channel.
    Transfer,
}

fn main() {
    let cli = Cli::parse();
    match cli.command {
        Command::Transfer => {}
    }
}
