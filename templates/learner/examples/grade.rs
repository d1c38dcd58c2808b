// `cargo run --example grade`: the whole suite on `MyLimiter`, then its grade card (score per
// requirement and per level, the combined diagnosis, the first failure in full).
fn main() -> std::process::ExitCode {
    ratelimit_lab::grade_card::<my_limiter::MyLimiter>()
}
