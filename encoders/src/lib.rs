//! Coverage criteria: turns decisions and expression trees into label records (filled by the encoders issue).
