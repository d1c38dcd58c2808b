// One line turns `cargo test` into a grade of `MyLimiter` against the Rate Limiter lesson.
ratelimit_lab::conformance_suite!(my_limiter::MyLimiter);
