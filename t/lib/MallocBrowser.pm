# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

package MallocBrowser;

# A real browser for the tests: Debian's chromium, headless, driven by its
# own command line.  dom() loads a page, lets its scripts run and returns
# the DOM as the page left it.

use strict;
use warnings;

use Exporter qw(import);
use File::Temp qw(tempdir);

our @EXPORT_OK = qw(chromium dom);

our $CHROMIUM = $ENV{TEST_CHROMIUM} || '/usr/bin/chromium';

# the path of a browser that runs here, or undef and why not
sub chromium {
    return (undef, "$CHROMIUM not found: install Debian's chromium package "
                   . "(make deps does)") unless -x $CHROMIUM;

    my $out = `$CHROMIUM --version 2>&1`;
    return (undef, "$CHROMIUM does not run: $out") if $? != 0;

    return ($CHROMIUM, $out);
}

# dom($url, budget => ms, args => [...], timeout => s): the page's DOM
# after its scripts had "budget" ms of virtual time (pending fetches hold
# the clock); "" if the browser failed or ran past "timeout" seconds
sub dom {
    my ($url, %o) = @_;

    # a fresh profile each time: no cache, no cookies, nothing remembered
    my $profile = tempdir('malloc-chromium-XXXXXX', TMPDIR => 1,
                          CLEANUP => 1);

    # no-sandbox: root in a container; the rest keeps chromium off the
    # network it would reach by itself (updates, sync, lookups)
    my @cmd = ('timeout', $o{timeout} // 60, $CHROMIUM, qw(--headless --no-sandbox --disable-gpu
        --disable-quic --no-first-run --disable-background-networking
        --disable-component-update --disable-sync
        --disable-default-apps --disable-extensions),
        "--user-data-dir=$profile",
        '--virtual-time-budget=' . ($o{budget} // 5000),
        @{ $o{args} // [] }, '--dump-dom', $url);

    my $pid = open(my $fh, '-|') // die "fork: $!";

    if ($pid == 0) {
        open STDERR, '>', "$profile/stderr";
        exec @cmd or exit 127;
    }

    local $/;
    my $dom = <$fh> // '';
    close $fh;

    return $dom;
}

1;
