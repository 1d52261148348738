#!/usr/bin/env Rscript
# Writes the real data sets of issue 29's benchmark as response files that
# `bfhpo infer` and bench/stan_reference.R read (header of item names, an id
# column, empty = missing), from Debian's r-cran-psychtools:
#   Rscript bench/real_data.R OUT_DIR
# epi.csv: the Eysenck Personality Inventory, 57 binary items as 0/1 (missing cells kept);
# spi.csv: the SAPA Personality Inventory's 135 items with 6 categories, as 0..5.
# psych's `ability` and `bfi` are kept aside for an independent check.
args <- commandArgs(trailingOnly = TRUE)
out <- if (length(args) >= 1) args[1] else "."
dir.create(out, showWarnings = FALSE, recursive = TRUE)
write_responses <- function(responses, name) {
  responses <- as.data.frame(responses)
  file <- file.path(out, paste0(name, ".csv"))
  write.csv(cbind(id = seq_len(nrow(responses)), responses), file, row.names = FALSE, na = "")
  cat(sprintf("%s: %d persons x %d items, categories %s, %.1f%% of cells missing\n", file, nrow(responses),
              ncol(responses), paste(sort(unique(na.omit(unlist(responses)))), collapse = " "),
              100 * mean(is.na(as.matrix(responses)))))
}
data(epi, package = "psychTools")
write_responses(epi - 1, "epi")  # coded 1/2 in psychTools
data(spi, package = "psychTools")
items <- grep("^q_", names(spi))
write_responses(spi[, items] - 1, "spi")
