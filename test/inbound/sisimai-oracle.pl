#!/usr/bin/perl
# Reads each mail file named on the command line with Sisimai (the reference bounce classifier,
# Debian's libsisimai-perl) and prints one JSON line per file, in the order given:
#   {"file":…,"count":N,"recipient":…,"reason":…,"status":…,"replycode":…,"feedbacktype":…,"agent":…,"command":…,"diagnostic":…}
# with the fields of the first result, or {"file":…,"count":0} when Sisimai finds no bounce in it.
# One process reads the whole corpus (Sisimai's start-up costs more than a file).
use strict;
use warnings;
use JSON::PP;
use Sisimai;

# Sisimai v5 calls it `rise`; v4 (Debian's, today) `make`.
my $read = Sisimai->can('rise') ? 'rise' : 'make';
my $json = JSON::PP->new->canonical->utf8;
binmode STDOUT;
$| = 1;

for my $file (@ARGV) {
    my $results = eval { Sisimai->$read($file) } // [];
    my $first = $results->[0];
    my $line = { 'file' => $file, 'count' => scalar @$results };
    if ($first) {
        my $recipient = $first->recipient;
        $line->{'recipient'}    = ref $recipient ? $recipient->address : $recipient;
        $line->{'reason'}       = $first->reason;
        $line->{'status'}       = $first->deliverystatus;
        $line->{'replycode'}    = $first->replycode;
        $line->{'feedbacktype'} = $first->feedbacktype;
        $line->{'agent'}        = $first->smtpagent;
        $line->{'command'}      = $first->smtpcommand;
        my $diagnostic = $first->diagnosticcode // '';
        utf8::decode($diagnostic) unless utf8::is_utf8($diagnostic);
        $line->{'diagnostic'} = substr($diagnostic, 0, 300);
    }
    $line->{'error'} = "$@" if $@;
    print $json->encode($line), "\n";
}
