fn main() {
    std::process::exit(pathtrack::cli::main_entry());
}
