/* SPDX-License-Identifier: GPL-2.0 */
#ifndef FTVCTL_SUBCOMMANDS_H
#define FTVCTL_SUBCOMMANDS_H

/* Each gets argv from the subcommand's name on, and returns the exit code. */
int show_main(int argc, char **argv);
int set_main(int argc, char **argv);
int showconf_main(int argc, char **argv);
int setconf_main(int argc, char **argv);
int syncconf_main(int argc, char **argv);
int monitor_main(int argc, char **argv);
int probe_main(int argc, char **argv);
int peer_main(int argc, char **argv);
int genkey_main(int argc, char **argv);
int genpsk_main(int argc, char **argv);
int pubkey_main(int argc, char **argv);
/* Not a subcommand: "ftvctl --complete", for the bash completion. */
int complete_main(int argc, char **argv);

#endif
