#!/usr/bin/env Rscript
# Writes the real data sets of issue 29's benchmark as response files that
# `bfhpo infer` and bench/stan_reference.R read (header of item names, an id
# column, empty = missing), from Debian's r-cran-psychtools:
#   Rscript bench/real_data.R OUT_DIR
# epi.csv: the Eysenck Personality Inventory, 57 binary items as 0/1 (missing cells kept);
# spi.csv: the SAPA Personality Inventory's 135 items with 6 categories, as 0..5;
# and the one-dimensional scales a researcher fits an IRT model to, each item
# keyed by the package's scoring keys (a "-" key reversed: 1 - y, 5 - y):
# epi_neuroticism.csv: epi's N scale, 24 binary items, 3,570 persons, 2.2% missing;
# spi_neuroticism.csv: spi's Neuro scale, 14 items with 6 categories, 4,000 persons;
# epir_neuroticism.csv: epiR's first testing (474 persons), the N scale, 2.0% missing;
# geras_mcog.csv: GERAS's M.cog scale, 7 items of a 5-point scale (coded 2..6, as 0..4), 471 persons.
# The last two are small enough to train at init's length on a 2-core machine.
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
keyed <- function(responses, keys, top) {
  names <- sub("^-", "", keys)
  scale <- responses[, names]
  reversed <- startsWith(keys, "-")
  scale[, reversed] <- top - scale[, reversed]
  scale
}
write_responses(keyed(epi - 1, psychTools::epi.keys$N, 1), "epi_neuroticism")
write_responses(keyed(spi[, items] - 1, psychTools::spi.keys$Neuro, 5), "spi_neuroticism")
epir <- psychTools::epiR[psychTools::epiR$time == 1, ]
write_responses(keyed(epir[, paste0("V", 1:57)] - 1, psychTools::epi.keys$N, 1), "epir_neuroticism")
write_responses(keyed(psychTools::GERAS.items - 2, psychTools::GERAS.keys$M.cog, 4), "geras_mcog")
# athenstaedt_f5.csv, athenstaedt_m5.csv: Athenstaedt's short femininity and
# masculinity scales (gender-role self-concept), 5 items of a 7-point scale
# each (coded 1..7, as 0..6), 576 persons: graded scales the GRM describes
# (one factor: first / second eigenvalue of the polychoric correlations 6.3
# and 5.0, largest residual correlation 0.08).
write_responses(keyed(psychTools::Athenstaedt - 1, psychTools::Athenstaedt.keys$F5, 6), "athenstaedt_f5")
write_responses(keyed(psychTools::Athenstaedt - 1, psychTools::Athenstaedt.keys$M5, 6), "athenstaedt_m5")
